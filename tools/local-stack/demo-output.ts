/**
 * What `npm run demo` prints: a line per path as soon as it ends (so a newcomer sees progress from the first sale
 * on, not a minute of silence), and at the end one plain table of everything.
 */
import { formatTable } from '../bench/text-table.js';

export type Outcome = 'ok' | 'UNEXPECTED' | 'FAILED';

/** One sale path or other piece of the demo, as it ended. */
export interface DemoResult {
  /** The path's or piece's name. */
  name: string;
  /** The application it went through (a sale's compliance application, a piece's accounting one), when shown. */
  via?: string;
  outcome: Outcome;
  seconds: number;
  /** The sale's trader invoice number (sales only). */
  invoice?: string;
  /** The signed receipt's CU invoice number (sales only). */
  receipt?: string;
  note: string;
}

const OUTCOME_WIDTH = 'UNEXPECTED'.length;

/**
 * `  ok          immediate (201)            7.6 s  via demo-retail  KRACU0100000001/1`: outcome first, so a failure
 * stands out.
 */
export function progressLine(result: DemoResult, nameWidth: number): string {
  const details = [result.via === undefined ? undefined : `via ${result.via}`, result.receipt, result.note]
    .filter(Boolean)
    .join('  ');
  return `  ${result.outcome.padEnd(OUTCOME_WIDTH)}  ${result.name.padEnd(nameWidth)}  ${result.seconds.toFixed(1).padStart(5)} s${details ? `  ${details}` : ''}`;
}

const seconds = (s: number) => Math.round(s * 10) / 10;

/** The application column, in every row of a table where any result names one. */
function viaColumn(results: readonly DemoResult[]): (result: DemoResult) => { application?: string } {
  const shown = results.some((r) => r.via !== undefined);
  return (result) => (shown ? { application: result.via ?? '-' } : {});
}

/** The closing summary: the sales, then the other pieces, each a plain table. */
export function summaryTables(sales: readonly DemoResult[], pieces: readonly DemoResult[]): string {
  const saleVia = viaColumn(sales);
  const pieceVia = viaColumn(pieces);
  const saleRows = sales.map((r) => ({
    path: r.name,
    ...saleVia(r),
    result: r.outcome,
    seconds: seconds(r.seconds),
    invoice: r.invoice,
    receipt: r.receipt,
    note: r.note,
  }));
  const pieceRows = pieces.map((r) => ({
    piece: r.name,
    ...pieceVia(r),
    result: r.outcome,
    seconds: seconds(r.seconds),
    note: r.note,
  }));
  return ['Sales', formatTable(saleRows), '', 'Other pieces', formatTable(pieceRows)].join('\n');
}

/** The last line: what ended as expected, or how much did not. */
export function verdictLine(sales: readonly DemoResult[], pieces: readonly DemoResult[]): string {
  const failed = [...sales, ...pieces].filter((r) => r.outcome !== 'ok').length;
  return failed === 0
    ? `all ${sales.length} sales and ${pieces.length} other pieces ended as expected`
    : `${failed} of ${sales.length + pieces.length} sales and pieces did not end as expected`;
}
