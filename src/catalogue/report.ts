/** An import's report as CSV, for an operator's spreadsheet; the JSON report keeps every value as it is. */
import { stringify } from 'csv-stringify/sync';
import type { CatalogueItemResult } from '../contracts/catalogue-import.js';

/** What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One row per line of the file; a cell starting like a formula gets a leading `'` (docs/catalogue.md, step 7). */
export function reportCsv(rows: readonly CatalogueItemResult[]): string {
  const asText = (cell: string | null) => (cell !== null && FORMULA_START.test(cell) ? `'${cell}` : cell);
  return stringify(
    rows.map((row) => ({ ...row, externalId: asText(row.externalId), reason: asText(row.reason) })),
    { header: true, columns: ['line', 'externalId', 'outcome', 'itemId', 'reason'] },
  );
}
