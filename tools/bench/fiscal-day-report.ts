/** The fiscalDay section's part of the bench report: its shape, its targets and its tables. report.ts includes them. */
import type { Cell } from './text-table.js';

/** One control unit's day: the book's figures against the sum of the documents the sandbox signed. */
export interface FiscalDayCheck {
  scuId: string;
  date: string;
  /** Documents the sandbox signed for it, by label; the book's count (closed and amended). */
  signed: Record<string, number>;
  counted: Record<string, number>;
  /** Per-letter totals equal to the cent, and how the book closed: by its timer, or by an operator. */
  totalsExact: boolean;
  closedBy: 'timer' | 'operator' | 'not closed';
  amendments: number;
  /** Receipt numbers between the first and last the book never saw (0: every one of this worker's). */
  missing: number;
}

export interface FiscalDayReport {
  sales: number;
  refunds: number;
  /** The sandbox's clock ran this far ahead of the worker's, so that its midnight came within the run. */
  clockAheadSeconds: number;
  graceSeconds: number;
  workerKills: number;
  callbacksLost: number;
  outageSeconds: number;
  days: FiscalDayCheck[];
  /** Days whose totals equal the independent sum, of all days checked. */
  totalsExact: number;
  countedTwice: number;
  missed: number;
  /** Of the three planted differences, the share the till close named; what it named beyond them. */
  differencesFound: number;
  falseDifferences: number;
  named: string[];
  /** Compliance requests made while the days closed and the till was matched, per sale. */
  extraRequestsPerSale: number;
  /** The largest payload a 10,000-sale day's book wrote (its continue-as-new carry, its delivered close). */
  maxPayloadBytes: number;
  busyDay: { entries: number; gaps: number; runs: number; seconds: number };
  /** End of grace until the close was in the sink, the slowest of the days that closed by their timer. */
  closeDelaySeconds: number;
  /** A till's signed receipt on a worker with day books against one with them off, same run, medians. */
  tillLatencyRatio: number;
  tillMs: { withBooks: number; without: number; pairs: number };
}

export const FISCAL_DAY_TARGET_TEXT = {
  totalsExact: '= 1.0',
  countedTwice: '= 0',
  missed: '= 0',
  differencesFound: '= 1.0',
  falseDifferences: '= 0',
  extraRequestsPerSale: '= 0',
  maxPayloadBytes: '≤ 64 KB',
  closeDelaySeconds: '≤ 60',
  tillLatencyRatio: '≤ 1.1',
} as const;

export const FISCAL_DAY_TARGET_MET: Record<keyof typeof FISCAL_DAY_TARGET_TEXT, (v: number) => boolean> = {
  totalsExact: (v) => v === 1,
  countedTwice: (v) => v === 0,
  missed: (v) => v === 0,
  differencesFound: (v) => v === 1,
  falseDifferences: (v) => v === 0,
  extraRequestsPerSale: (v) => v === 0,
  maxPayloadBytes: (v) => v <= 64 * 1024,
  closeDelaySeconds: (v) => v <= 60,
  tillLatencyRatio: (v) => v <= 1.1,
};

export function formatFiscalDay(
  f: FiscalDayReport,
  section: (title: string, rows: ReadonlyArray<Record<string, Cell>>) => void,
): void {
  const keys = Object.keys(FISCAL_DAY_TARGET_TEXT) as Array<keyof typeof FISCAL_DAY_TARGET_TEXT>;
  const detail: Partial<Record<keyof typeof FISCAL_DAY_TARGET_TEXT, string>> = {
    differencesFound: f.named.join('; '),
    maxPayloadBytes: `${f.busyDay.entries} entries, ${f.busyDay.gaps} gaps, ${f.busyDay.runs} runs, ${f.busyDay.seconds} s`,
    tillLatencyRatio: `${f.tillMs.withBooks} / ${f.tillMs.without} ms, ${f.tillMs.pairs} pairs`,
  };
  section(
    `Fiscal day: ${f.sales} sales and ${f.refunds} refunds across midnight on two control units, an authority outage ` +
      `of ${f.outageSeconds} s over midnight, the worker killed ${f.workerKills} times, ${f.callbacksLost} callbacks ` +
      `lost, grace ${f.graceSeconds} s`,
    keys.map((key) => ({
      key: `fiscalDay.${key}`,
      value: f[key],
      target: FISCAL_DAY_TARGET_TEXT[key],
      detail: detail[key] ?? '',
    })),
  );
  section(
    'Fiscal day: each day, the book against the documents the sandbox signed',
    f.days.map((d) => ({
      day: `${d.date} ${d.scuId}`,
      signed: JSON.stringify(d.signed),
      counted: JSON.stringify(d.counted),
      totals: d.totalsExact ? 'exact' : 'DIFFER',
      closed: d.closedBy,
      amendments: d.amendments,
      missing: d.missing,
    })),
  );
}
