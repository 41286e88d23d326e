/**
 * The merchant's mappings as CSV, for a spreadsheet: exported with every mapping's source, imported as the
 * merchant's own. Every row is checked with the contract's schema, and a file with any bad row imports nothing.
 */
import { stringify } from 'csv-stringify/sync';
import { mappingKeyOf as keyOf, type Mapping } from '../contracts/stock-in.js';
import { checkMapping, type CheckedMapping } from './stock-in-input.js';
import { readCsvRows, type CsvRow } from '../csv/read-rows.js';

export const MAPPINGS_CSV_COLUMNS = ['supplierPin', 'by', 'key', 'itemId', 'factor', 'notStock', 'source'] as const;

/** As many as the stock-in takes in one `putMappings`. */
export const MAPPINGS_CSV_ROWS_MAX = 10_000;

/** `row`: the file's line the row ends on, the header being row 1 (a spreadsheet's row, unless a cell spans lines). */
export interface MappingsCsvProblem {
  /** 0: the file as a whole. */
  row: number;
  field: string;
  reason: string;
}

export function mappingsCsvProblemText({ row, field, reason }: MappingsCsvProblem): string {
  if (row === 0) return `the file ${reason}`;
  return field === '(row)' ? `row ${row} ${reason}` : `row ${row}: ${field} ${reason}`;
}

export class MappingsCsvError extends Error {
  override readonly name = 'MappingsCsvError';

  constructor(readonly problems: readonly [MappingsCsvProblem, ...MappingsCsvProblem[]]) {
    const rows = new Set(problems.map((p) => p.row)).size;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem(s))` : '';
    super(
      `the mappings CSV has ${problems.length} problem(s) on ${rows} row(s), nothing was imported: ` +
        `${mappingsCsvProblemText(problems[0])}${more}`,
    );
  }
}

/**
 * What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"): supplier lines are written by the
 * supplier, so a cell starting so is exported behind a `'`, which the import takes off again.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;
// Quotes before a formula are escaped by one more, so the import gives back exactly what was exported.
const asText = (cell: string) => (FORMULA_START.test(cell) ? `'${cell}` : cell);
const fromText = (cell: string) => (cell.startsWith("'") && FORMULA_START.test(cell) ? cell.slice(1) : cell);

/** Every mapping, by supplier and key, learned ones too (their `source` says so). */
export function mappingsToCsv(mappings: readonly Mapping[]): string {
  const order = (m: Mapping) => [m.supplierPin, m.by, m.key].join('\u0000');
  const rows = [...mappings]
    .sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0))
    .map((m) => ({
      supplierPin: asText(m.supplierPin),
      by: m.by,
      key: asText(m.key),
      itemId: 'itemId' in m ? asText(m.itemId) : '',
      factor: 'factor' in m ? String(m.factor) : '',
      notStock: 'notStock' in m ? 'true' : 'false',
      source: m.source,
    }));
  return stringify(rows, { header: true, columns: [...MAPPINGS_CSV_COLUMNS] });
}

const REQUIRED = ['supplierPin', 'by', 'key'] as const;
const YES_NO: Record<string, boolean> = { true: true, yes: true, '1': true, false: false, no: false, '0': false };
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** The file's mappings, in its order; a `MappingsCsvError` naming every bad row and field, all at once. */
export function mappingsFromCsv(csv: string): CheckedMapping[] {
  let header: string[];
  let parsed: CsvRow[];
  try {
    ({ header, rows: parsed } = readCsvRows(csv));
  } catch (err) {
    throw new MappingsCsvError([{ row: 0, field: '(file)', reason: `is not valid CSV: ${(err as Error).message}` }]);
  }
  const headerProblems = headerProblemsOf(header);
  if (headerProblems.length > 0) throw new MappingsCsvError(headerProblems as [MappingsCsvProblem]);

  const problems: MappingsCsvProblem[] = [];
  const mappings: CheckedMapping[] = [];
  const firstRowOf = new Map<string, number>();
  for (const { record, info } of parsed) {
    const row = info.lines;
    if (info.error) {
      const cells = info.error.record?.length ?? Object.keys(record).length;
      const why = cells > header.length ? 'a cell holding a comma needs quotes' : 'an empty cell still needs its comma';
      problems.push({
        row,
        field: '(row)',
        reason: `has ${cells} cells where the header has ${header.length}: ${why}`,
      });
      continue;
    }
    // A spreadsheet's empty rows are written as commas alone.
    if (Object.values(record).every((cell) => cell === '')) continue;
    const cells = recordOf(record);
    if ('problem' in cells) {
      problems.push({ row, ...cells.problem });
      continue;
    }
    const checked = checkMapping(cells.record);
    if (!checked.ok) {
      problems.push(...checked.problems.map((p) => ({ row, ...p })));
      continue;
    }
    const key = keyOf(checked.value);
    const first = firstRowOf.get(key);
    if (first !== undefined) {
      const reason =
        `is the same line of the same supplier as row ${first}'s ` +
        '(descriptions are alike whatever their case, spacing and punctuation)';
      problems.push({ row, field: 'key', reason });
      continue;
    }
    firstRowOf.set(key, row);
    mappings.push(checked.value);
  }
  const rows = parsed.length;
  if (rows === 0) problems.push({ row: 0, field: '(file)', reason: 'has no rows' });
  if (rows > MAPPINGS_CSV_ROWS_MAX)
    problems.push({
      row: 0,
      field: '(file)',
      reason: `has ${rows} rows: an import takes at most ${MAPPINGS_CSV_ROWS_MAX}`,
    });
  if (problems.length > 0) throw new MappingsCsvError(problems as [MappingsCsvProblem]);
  return mappings;
}

function headerProblemsOf(header: readonly string[]): MappingsCsvProblem[] {
  const columns = MAPPINGS_CSV_COLUMNS.join(',');
  if (header.length === 0)
    return [{ row: 0, field: '(file)', reason: `is empty: its first row names the columns (${columns})` }];
  const known = new Set<string>(MAPPINGS_CSV_COLUMNS);
  const problems: MappingsCsvProblem[] = header
    .filter((name) => !known.has(name))
    .map((name) => ({ row: 1, field: name, reason: `is not a known column (the columns: ${columns})` }));
  for (const name of new Set(header.filter((name, index) => header.indexOf(name) !== index)))
    problems.push({ row: 1, field: name, reason: 'is named more than once' });
  for (const name of REQUIRED)
    if (!header.includes(name)) problems.push({ row: 1, field: name, reason: 'is a column the header must have' });
  if (!header.includes('itemId') && !header.includes('notStock'))
    problems.push({ row: 1, field: 'itemId', reason: 'is a column the header must have (or notStock)' });
  return problems;
}

/** An empty cell is absent; `source` is the stock-in's to say, not the file's. */
function recordOf(
  cells: Record<string, string>,
): { record: Record<string, unknown> } | { problem: Omit<MappingsCsvProblem, 'row'> } {
  const record: Record<string, unknown> = {};
  for (const column of ['supplierPin', 'key', 'itemId'] as const)
    if (cells[column]) record[column] = fromText(cells[column]);
  if (cells.by) record.by = cells.by.toLowerCase();
  if (cells.factor) record.factor = NUMBER.test(cells.factor) ? Number(cells.factor) : cells.factor;
  if (cells.notStock) {
    const notStock = YES_NO[cells.notStock.toLowerCase()];
    if (notStock === undefined)
      return { problem: { field: 'notStock', reason: 'must be true or false (or yes / no, 1 / 0), or empty' } };
    if (notStock) record.notStock = true;
  }
  return { record };
}
