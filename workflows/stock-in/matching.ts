/** Which item a supplier line is: the merchant's mapping, a learned one, or a name that picks exactly one item. */
import {
  mappingKeyOf as keyOf,
  normalise,
  type Mapping,
  type MappingKey,
  type MappingTarget,
  type SupplierLine,
} from '../../src/contracts/stock-in.js';
import type { CatalogueItem, NameAnswers } from '../../src/contracts/item-names.js';

export { keyOf, normalise };
export type { CatalogueItem, NameAnswers };

export type LineMatch =
  | { itemId: string; factor: number; by: 'merchant' | 'learned' | 'name' }
  | { notStock: true; by: 'merchant' | 'learned' };

/**
 * The mapping table: one entry per key; a merchant's mapping outranks a learned one for the same key. In a bucket it is
 * the bucket's whole share; in the stock-in, the mappings read for the work at hand, and what changed since the last
 * write to the buckets.
 */
export class MappingTable {
  private readonly byKey = new Map<string, Mapping>();
  private readonly changed = new Map<string, Mapping>();
  private readonly removed = new Set<string>();

  constructor(mappings: readonly Mapping[] = []) {
    for (const m of mappings) this.byKey.set(keyOf(m), m);
  }

  list(): Mapping[] {
    return [...this.byKey.values()];
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Mapping | undefined {
    return this.byKey.get(key);
  }

  /** Mappings read from the buckets: a key changed here since is newer and stays. */
  load(mappings: readonly Mapping[]): void {
    for (const m of mappings) {
      const key = keyOf(m);
      if (!this.changed.has(key) && !this.removed.has(key)) this.byKey.set(key, m);
    }
  }

  /** A learned mapping never replaces the merchant's own. */
  put(m: Mapping): void {
    const key = keyOf(m);
    const existing = this.byKey.get(key);
    if (m.source === 'learned' && existing?.source === 'merchant') return;
    this.byKey.set(key, m);
    this.changed.set(key, m);
    this.removed.delete(key);
  }

  remove(key: MappingKey | string): boolean {
    const k = typeof key === 'string' ? key : keyOf(key);
    this.changed.delete(k);
    this.removed.add(k);
    return this.byKey.delete(k);
  }

  removeMerchant(): void {
    for (const [key, m] of this.byKey) if (m.source === 'merchant') this.byKey.delete(key);
  }

  /** What changed since the last call: to write to the buckets. */
  takeChanges(): { put: Mapping[]; remove: string[] } {
    const taken = { put: [...this.changed.values()], remove: [...this.removed] };
    this.changed.clear();
    this.removed.clear();
    return taken;
  }

  /** By the supplier's code first (where its lines carry one), then by the description. */
  find(supplierPin: string, line: Pick<SupplierLine, 'description' | 'code'>): Mapping | undefined {
    const byCode = line.code ? this.byKey.get(keyOf({ supplierPin, by: 'code', key: line.code })) : undefined;
    return byCode ?? this.byKey.get(keyOf({ supplierPin, by: 'description', key: line.description }));
  }
}

/** The keys a line's mapping may be under: its code's (where it has one) and its description's. */
export function lineKeys(supplierPin: string, line: Pick<SupplierLine, 'description' | 'code'>): string[] {
  return [
    ...(line.code ? [keyOf({ supplierPin, by: 'code', key: line.code })] : []),
    keyOf({ supplierPin, by: 'description', key: line.description }),
  ];
}

export function targetOf(m: Mapping): MappingTarget {
  return 'notStock' in m ? { notStock: true } : { itemId: m.itemId, factor: m.factor };
}

/** The line's match, or undefined when a person must say. */
export function matchLine(
  table: MappingTable,
  names: NameAnswers | undefined,
  supplierPin: string,
  line: Pick<SupplierLine, 'description' | 'code'>,
): LineMatch | undefined {
  const mapped = table.find(supplierPin, line);
  if (mapped) {
    return 'notStock' in mapped
      ? { notStock: true, by: mapped.source }
      : { itemId: mapped.itemId, factor: mapped.factor, by: mapped.source };
  }
  const itemId = names?.[normalise(line.description)]?.itemId;
  return itemId ? { itemId, factor: 1, by: 'name' } : undefined;
}
