// What a caller sends the stock-in, checked by the contract's own schemas before anything reaches Temporal.
import { z } from 'zod';
import { stockInSchemas, type MappingKey } from '../contracts/stock-in.js';
import { checkInput, isRecord, nonEmpty, type InputProblem } from '../contracts/sale-input.js';
import { parseInput, SaleInputError } from './errors.js';

type Checked<T> = { ok: true; value: T } | { ok: false; problems: [InputProblem, ...InputProblem[]] };

export type CheckedMapping = z.output<ReturnType<typeof stockInSchemas>['mapping']>;
export type MapLineRequest = z.input<ReturnType<typeof stockInSchemas>['mapLineArgs']>;
export type CorrectLineRequest = z.input<ReturnType<typeof stockInSchemas>['correctLineArgs']>;

const { mappingKey: mappingKeySchema, mappingTarget, mapLineArgs } = stockInSchemas();
const [itemTarget, notStockTarget] = mappingTarget.options;

/** `base` joined to each of the union's branches, as strict objects of their own. */
function branches(base: z.ZodRawShape): { item: z.ZodType; notStock: z.ZodType } {
  return {
    item: z.strictObject({ ...base, ...itemTarget.shape }),
    notStock: z.strictObject({ ...base, ...notStockTarget.shape }),
  };
}

const MAPPING_BRANCHES = branches(mappingKeySchema.shape);
const MAP_LINE_BRANCHES = branches(mapLineArgs.def.left.shape);

const refused = (field: string, reason: string): Checked<never> => ({ ok: false, problems: [{ field, reason }] });

/**
 * The contract joins a key to "an item or not stock" by a union, which zod refuses as a whole ("Invalid input"): the
 * branch the value means (`notStock` given or not) is checked alone first, so the field at fault is named. The
 * contract's schema has the last word.
 */
function checkTargeted<T>(branch: ReturnType<typeof branches>, contract: z.ZodType<T>, value: unknown): Checked<T> {
  if (isRecord(value)) {
    const notStock = 'notStock' in value;
    if (notStock && ('itemId' in value || 'factor' in value))
      return refused('notStock', 'cannot be given with itemId or factor: a line is an item or not stock, not both');
    const checked = checkInput(notStock ? branch.notStock : branch.item, value);
    if (!checked.ok) {
      const [first, ...rest] = checked.problems.map((p) =>
        p.field === 'itemId' && p.reason === 'is required'
          ? { ...p, reason: 'is required (or notStock: true, for a line that is not stock)' }
          : p,
      );
      return { ok: false, problems: [first!, ...rest] };
    }
  }
  return checkInput(contract, value);
}

/** One mapping, every problem named by field: the CSV import reports them by row. */
export function checkMapping(value: unknown): Checked<CheckedMapping> {
  return checkTargeted(MAPPING_BRANCHES, stockInSchemas().mapping, value);
}

function orThrow<T>(subject: string, checked: Checked<T>): T {
  if (checked.ok) return checked.value;
  throw new SaleInputError(subject, checked.problems);
}

export function parseMapping(value: unknown): CheckedMapping {
  return orThrow('mapping', checkMapping(value));
}

export function parseMappings(mappings: unknown, replace: unknown): { mappings: CheckedMapping[]; replace: boolean } {
  if (Array.isArray(mappings))
    for (const [index, mapping] of mappings.entries()) {
      const checked = checkMapping(mapping);
      if (!checked.ok) {
        const [first, ...rest] = checked.problems.map((p) => ({
          ...p,
          field: p.field === '(input)' ? `mappings[${index}]` : `mappings[${index}].${p.field}`,
        }));
        throw new SaleInputError('putMappings request', [first!, ...rest]);
      }
    }
  return parseInput('putMappings request', stockInSchemas().putMappingsArgs, { mappings, replace });
}

export function parseMapLine(value: unknown) {
  return orThrow('mapLine request', checkTargeted(MAP_LINE_BRANCHES, stockInSchemas().mapLineArgs, value));
}

export function parseCorrectLine(value: unknown) {
  return parseInput('correctLine request', stockInSchemas().correctLineArgs, value);
}

export function parseMappingKey(value: unknown): MappingKey {
  return parseInput('mapping key', stockInSchemas().removeMappingArgs, value);
}

/** Kept as given: the stock-in's workflow id is made of the business id the purchases sync was configured with. */
export function parseStockInBusinessId(businessId: unknown): string {
  return parseInput('stock-in reference', z.strictObject({ businessId: nonEmpty() }), { businessId }).businessId;
}
