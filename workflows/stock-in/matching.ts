/** Which item a supplier line is: the merchant's mapping, a learned one, or a name that picks exactly one item. */
import {
  mappingKeyOf as keyOf,
  normalise,
  type Mapping,
  type MappingKey,
  type MappingTarget,
  type SupplierLine,
} from '../../src/contracts/stock-in.js';

export { keyOf, normalise };

export interface CatalogueItem {
  id: string;
  name: string;
}

export type LineMatch =
  | { itemId: string; factor: number; by: 'merchant' | 'learned' | 'name' }
  | { notStock: true; by: 'merchant' | 'learned' };

/** The mapping table: one entry per key; a merchant's mapping outranks a learned one for the same key. */
export class MappingTable {
  private readonly byKey = new Map<string, Mapping>();

  constructor(mappings: readonly Mapping[] = []) {
    for (const m of mappings) this.byKey.set(keyOf(m), m);
  }

  list(): Mapping[] {
    return [...this.byKey.values()];
  }

  get size(): number {
    return this.byKey.size;
  }

  /** A learned mapping never replaces the merchant's own. */
  put(m: Mapping): void {
    const key = keyOf(m);
    const existing = this.byKey.get(key);
    if (m.source === 'learned' && existing?.source === 'merchant') return;
    this.byKey.set(key, m);
  }

  remove(key: MappingKey): boolean {
    return this.byKey.delete(keyOf(key));
  }

  removeMerchant(): void {
    for (const [key, m] of this.byKey) if (m.source === 'merchant') this.byKey.delete(key);
  }

  /** By the supplier's code first (where its lines carry one), then by the description. */
  find(supplierPin: string, line: Pick<SupplierLine, 'description' | 'code'>): Mapping | undefined {
    const byCode = line.code ? this.byKey.get(keyOf({ supplierPin, by: 'code', key: line.code })) : undefined;
    return byCode ?? this.byKey.get(keyOf({ supplierPin, by: 'description', key: line.description }));
  }
}

export function targetOf(m: Mapping): MappingTarget {
  return 'notStock' in m ? { notStock: true } : { itemId: m.itemId, factor: m.factor };
}

/** The line's match, or undefined when a person must say. */
export function matchLine(
  table: MappingTable,
  catalogue: readonly CatalogueItem[] | undefined,
  supplierPin: string,
  line: Pick<SupplierLine, 'description' | 'code'>,
): LineMatch | undefined {
  const mapped = table.find(supplierPin, line);
  if (mapped) {
    return 'notStock' in mapped
      ? { notStock: true, by: mapped.source }
      : { itemId: mapped.itemId, factor: mapped.factor, by: mapped.source };
  }
  if (!catalogue) return undefined;
  const name = normalise(line.description);
  if (name === '') return undefined;
  const same = catalogue.filter((item) => normalise(item.name) === name);
  return same.length === 1 ? { itemId: same[0]!.id, factor: 1, by: 'name' } : undefined;
}

/** Items sharing the most words with the line, best first: what an operator is offered. */
export function candidates(catalogue: readonly CatalogueItem[], description: string, max = 3): CatalogueItem[] {
  const words = new Set(
    normalise(description)
      .split(' ')
      .filter((w) => w.length > 1),
  );
  if (words.size === 0) return [];
  return catalogue
    .map((item) => ({
      item,
      shared: normalise(item.name)
        .split(' ')
        .filter((w) => words.has(w)).length,
    }))
    .filter((c) => c.shared > 0)
    .sort((a, b) => b.shared - a.shared || a.item.name.localeCompare(b.item.name))
    .slice(0, max)
    .map((c) => c.item);
}
