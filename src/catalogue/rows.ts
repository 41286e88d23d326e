/** A catalogue file's rows, from CSV or JSON; every problem named by line and column, all at once, before sending. */
import { isUtf8 } from 'node:buffer';
import { readCsvRows, type CsvRow } from '../csv/read-rows.js';
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

/** The rows of a file's bytes, each checked; a line not UTF-8 is named (why: docs/catalogue.md, step 1). */
export function readCatalogue(file: Uint8Array, format: CatalogueFormat): ReadCatalogue {
  const text = new TextDecoder().decode(file);
  const encoding = encodingProblems(file, format);
  // Not UTF-8 as a whole (UTF-16, or JSON): what was read of it would only be named as garbled.
  if (encoding.some((problem) => problem.line === 0)) return { rows: [], records: [], problems: encoding };
  const records = format === 'csv' ? csvRecords(text) : jsonRecords(text);
  if ('problem' in records) return { rows: [], records: [], problems: [...encoding, records.problem] };
  const rows: ReadCatalogue['rows'] = [];
  const problems: CatalogueProblem[] = [...encoding, ...(records.headerProblems ?? [])];
  const firstLineOf = new Map<string, number>();
  const notUtf8 = new Set(encoding.map((problem) => problem.line));
  for (const { line, record } of records.records) {
    if (notUtf8.has(line)) continue;
    const checked = checkInput(catalogueSchemas().row, record);
    if (!checked.ok) {
      problems.push(...checked.problems.map((p) => ({ line, column: p.field, reason: inCells(p, format) })));
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

/** A reason said of a JSON value, said of a CSV cell: a cell is text, so a yes/no cell that is neither is a word. */
function inCells(problem: { field: string; reason: string }, format: CatalogueFormat): string {
  const yesOrNo = format === 'csv' && problem.field === 'stockTracked';
  return yesOrNo ? 'must be yes or no (or true / false, 1 / 0)' : problem.reason;
}

type Records =
  | { records: Array<{ line: number; record: unknown }>; headerProblems?: CatalogueProblem[] }
  | { problem: CatalogueProblem };

/** An empty cell is absent; numbers and yes/no are typed. Column and cell-count rules: docs/catalogue.md, step 1. */
function csvRecords(text: string): Records {
  let header: string[];
  let parsed: CsvRow[];
  try {
    ({ header, rows: parsed } = readCsvRows(text));
  } catch (err) {
    const line = (err as { lines?: number }).lines ?? 0;
    return { problem: fileProblem(`is not valid CSV: ${(err as Error).message}`, line) };
  }
  const known = new Set<string>(CATALOGUE_ROW_FIELDS);
  const problems: CatalogueProblem[] = header
    .filter((name) => !known.has(name))
    .map((column) => ({ line: 1, column, reason: `is not a known column${meant(column)}` }));
  const repeated = new Set(header.filter((name, index) => header.indexOf(name) !== index));
  problems.push(...[...repeated].map((column) => ({ line: 1, column, reason: 'is named more than once' })));
  const records: Array<{ line: number; record: unknown }> = [];
  for (const { record, info } of parsed) {
    if (info.error) {
      const cells = info.error.record?.length ?? Object.keys(record).length;
      const why = cells > header.length ? 'a cell holding a comma needs quotes' : 'an empty cell still needs its comma';
      const reason = `has ${cells} cells where the header has ${header.length}: ${why}`;
      problems.push({ line: info.lines, column: '(row)', reason });
      continue;
    }
    const cells = Object.entries(record).filter(([column, cell]) => cell !== '' && known.has(column));
    records.push({
      line: info.lines,
      record: Object.fromEntries(cells.map(([column, cell]) => [column, typedCell(column, cell)])),
    });
  }
  return { records, headerProblems: problems };
}

/** A hint for a known column written another way (`ExternalID`, `unit_price`) or cut short (`taxType`). */
function meant(column: string): string {
  const plain = (name: string) => name.toLowerCase().replace(/[\s_-]/g, '');
  const exact = CATALOGUE_ROW_FIELDS.find((name) => plain(name) === plain(column));
  const started = CATALOGUE_ROW_FIELDS.filter(
    (name) => plain(column).length >= 3 && plain(name).startsWith(plain(column)),
  );
  const field = exact ?? (started.length === 1 ? started[0] : undefined);
  return field === undefined ? '' : ` (did you mean ${field}?)`;
}

/** The physical lines (from 1) of `bytes` that are not UTF-8: named by line in CSV, for the whole file in JSON. */
function encodingProblems(bytes: Uint8Array, format: CatalogueFormat): CatalogueProblem[] {
  if (isUtf8(bytes)) return [];
  const save = `save the file as UTF-8${format === 'csv' ? ' (in Excel: "CSV UTF-8")' : ''}`;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return [fileProblem(`is UTF-16, not UTF-8: ${save}`)];
  // A byte of a multi-byte UTF-8 character is never a line feed: each line can be judged on its own.
  const lines: number[] = [];
  let start = 0;
  for (let end = 0, line = 1; end <= bytes.length; end++) {
    if (end < bytes.length && bytes[end] !== 0x0a) continue;
    if (!isUtf8(bytes.subarray(start, end))) lines.push(line);
    start = end + 1;
    line++;
  }
  if (format === 'csv') return lines.map((line) => ({ line, column: '(row)', reason: `is not UTF-8: ${save}` }));
  const named = lines.length > 10 ? `${lines.slice(0, 10).join(', ')} and ${lines.length - 10} more` : lines.join(', ');
  return [fileProblem(`is not UTF-8 (line${lines.length > 1 ? 's' : ''} ${named} of the file): ${save}`)];
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
