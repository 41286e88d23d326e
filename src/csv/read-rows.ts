/** How the project reads a CSV file of named columns: one reading, so every import treats quotes and cells alike. */
import { parse } from 'csv-parse/sync';

/** A row with its line in the file; `error` when its cell count differs from the header's. */
export type CsvRow = { record: Record<string, string>; info: { lines: number; error?: { record?: unknown[] } } };

/**
 * The header and the rows: a byte order mark dropped, cells trimmed, empty lines skipped, a row of the wrong length
 * kept with its error (the caller words it). Throws csv-parse's error when the text is not CSV at all.
 */
export function readCsvRows(text: string): { header: string[]; rows: CsvRow[] } {
  let header: string[] = [];
  const rows = parse(text, {
    bom: true,
    columns: (names: string[]) => (header = names),
    skip_empty_lines: true,
    trim: true,
    info: true,
    relax_column_count: true,
  }) as CsvRow[];
  return { header, rows };
}
