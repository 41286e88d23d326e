/** A catalogue file's rows, from CSV or JSON; every problem named by line and column, all at once, before sending. */
import { parse as parseCsv } from 'csv-parse/sync';
import {
  CATALOGUE_IMPORT_ROWS_MAX,
  CATALOGUE_ROW_FIELDS,
  catalogueSchemas,
  type CatalogueRow,
} from '../contracts/catalogue-import.js';
import { checkInput, isRecord } from '../contracts/sale-input.js';

/** `line`: CSV, its physical line; JSON, the item's number. */
export interface CatalogueProblem {
  line: number;
  column: string;
  reason: string;
}

export interface ReadCatalogue {
  /** The rows without a problem of their own, in the file's order. */
  rows: Array<{ line: number; row: CatalogueRow }>;
  /** Every row as read, for the checks that do not need a whole row (a wrong code is named beside a missing name). */
  records: Array<{ line: number; record: Record<string, unknown> }>;
  problems: CatalogueProblem[];
}

type CatalogueFormat = 'csv' | 'json';

/** A problem of the whole file (not CSV, no rows), on line 0 unless the parser names one. */
const fileProblem = (reason: string, line = 0): CatalogueProblem => ({ line, column: '(file)', reason });

export function formatOf(fileName: string): CatalogueFormat | undefined {
  const extension = fileName.toLowerCase().split('.').pop();
  return extension === 'csv' || extension === 'json' ? extension : undefined;
}

/** The rows of `text`, each checked; a file-wide problem (not CSV, no rows) has line 0. */
export function readCatalogue(text: string, format: CatalogueFormat): ReadCatalogue {
  const records = format === 'csv' ? csvRecords(text) : jsonRecords(text);
  if ('problem' in records) return { rows: [], records: [], problems: [records.problem] };
  const rows: ReadCatalogue['rows'] = [];
  const problems: CatalogueProblem[] = [...(records.headerProblems ?? [])];
  const firstLineOf = new Map<string, number>();
  for (const { line, record } of records.records) {
    const checked = checkInput(catalogueSchemas().row, record);
    if (!checked.ok) {
      problems.push(...checked.problems.map((p) => ({ line, column: p.field, reason: p.reason })));
      continue;
    }
    const first = firstLineOf.get(checked.value.externalId);
    if (first !== undefined) {
      problems.push({ line, column: 'externalId', reason: `is already on line ${first}` });
      continue;
    }
    firstLineOf.set(checked.value.externalId, line);
    rows.push({ line, row: checked.value });
  }
  const count = records.records.length;
  if (count === 0) problems.push(fileProblem('has no rows'));
  if (count > CATALOGUE_IMPORT_ROWS_MAX) {
    const limit = `an import takes at most ${CATALOGUE_IMPORT_ROWS_MAX} (import a larger catalogue as several files)`;
    problems.push(fileProblem(`has ${count} rows: ${limit}`));
  }
  const asRead = records.records.map(({ line, record }) => ({ line, record: isRecord(record) ? record : {} }));
  return { rows, records: asRead, problems };
}

type Records =
  | { records: Array<{ line: number; record: unknown }>; headerProblems?: CatalogueProblem[] }
  | { problem: CatalogueProblem };

/** An empty cell is absent, numbers and yes/no are typed for the schema; an unknown column is named on line 1. */
function csvRecords(text: string): Records {
  let header: string[] = [];
  let parsed: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    parsed = parseCsv(text, {
      bom: true,
      columns: (names: string[]) => (header = names),
      skip_empty_lines: true,
      trim: true,
      info: true,
    });
  } catch (err) {
    const line = (err as { lines?: number }).lines ?? 0;
    return { problem: fileProblem(`is not valid CSV: ${(err as Error).message}`, line) };
  }
  const known = new Set<string>(CATALOGUE_ROW_FIELDS);
  const unknown = header.filter((name) => !known.has(name));
  const problems = unknown.map((column) => ({ line: 1, column, reason: 'is not a known column' }));
  const records = parsed.map(({ record, info }) => ({
    line: info.lines,
    record: Object.fromEntries(
      Object.entries(record)
        .filter(([column, cell]) => cell !== '' && known.has(column))
        .map(([column, cell]) => [column, typedCell(column, cell)]),
    ),
  }));
  return { records, headerProblems: problems };
}

function typedCell(column: string, cell: string): unknown {
  if (column === 'unitPrice') return /^-?\d+(\.\d+)?$/.test(cell) ? Number(cell) : cell;
  if (column === 'stockTracked') {
    const answer = { true: true, yes: true, '1': true, false: false, no: false, '0': false }[cell.toLowerCase()];
    return answer ?? cell;
  }
  return cell;
}

function jsonRecords(text: string): Records {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return { problem: fileProblem('is not valid JSON') };
  }
  const list = Array.isArray(value) ? value : (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(list)) return { problem: fileProblem('must be a JSON array of items, or {"items": [...]}') };
  return { records: list.map((record, index) => ({ line: index + 1, record })) };
}
