/** An import's report as CSV, for an operator's spreadsheet; the JSON report keeps every value as it is. */
import { stringify } from 'csv-stringify/sync';
import type { CatalogueItemResult } from '../contracts/catalogue-import.js';

/** What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One row per line of the file. The service's words (a refusal, the fields it holds) and the file's ids reach a
 * spreadsheet that runs formulas: a cell starting like one is written with a leading `'`, so it is shown as text.
 */
export function reportCsv(rows: readonly CatalogueItemResult[]): string {
  const asText = (cell: string | null) => (cell !== null && FORMULA_START.test(cell) ? `'${cell}` : cell);
  return stringify(
    rows.map((row) => ({ ...row, externalId: asText(row.externalId), reason: asText(row.reason) })),
    { header: true, columns: ['line', 'externalId', 'outcome', 'itemId', 'reason'] },
  );
}
