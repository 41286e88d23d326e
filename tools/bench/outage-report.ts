/** The outage section's part of the bench report: its shape and its tables. report.ts includes both. */
import type { Cell } from './text-table.js';

/** One outage and the backlog of sales started while it lasted. */
export interface OutageRun {
  side: 'service' | 'authority';
  /** The sandbox's mode: `unavailable` (every route 503) or `reject` (submissions refused as `authority_unavailable`). */
  mode: string;
  durationSeconds: number;
  /** Sales started during the outage, spread over its first three quarters. */
  sales: number;
  /** Of those, signed by the sandbox once it ended; the rest are counted below. */
  signed: number;
  /** Closed as failed, or parked: each needs a person. */
  failed: number;
  parked: number;
  /** Still open (waiting out the outage, or anything but parked) when the bench stopped waiting. */
  stillOpen: number;
  /**
   * The most requests the outage answered that the application sent in any 60 s while it lasted (its log): every
   * request while the service is down, submissions while the authority is; and the same counting every request.
   */
  requestsPerMinuteWhileDown: number;
  allRequestsPerMinuteWhileDown: number;
  /** Every request of the application while it lasted, by route and status. */
  routesWhileDown: Record<string, number>;
  /** Outage end → last waiting sale signed, the budget's own share, and the difference (seconds). */
  lastSignedAfterSeconds: number;
  budgetSeconds: number;
  recoveryOverheadSeconds: number;
  orderInversions: number;
  /** Outage end → first waiting sale signed (seconds): how soon the first one found the way open. */
  firstSignedAfterSeconds: number;
  /** Tries the sales reported in their `outage.attempts` at the moment the outage ended, summed and the most of one. */
  attemptsAtEnd: { total: number; max: number; sampled: number };
  /** The sales in the order they were signed, each by its place in the order they were started (0 first). */
  signedOrder: number[];
}

export interface OutageReport {
  requestsPerMinute: number;
  windowMs: number;
  runs: OutageRun[];
  /** Sales parked or failed, and stock ledgers with a movement that waited for an operator, over both outages. */
  operatorActions: number;
  ledgersNeedingOperator: number;
  failedSales: number;
  /** Fiscal documents filed twice for one invoice number, and stock references recorded twice (sandbox's records). */
  duplicates: number;
  duplicateDocuments: number;
  duplicateStockReferences: number;
  /** (item, action) pairs whose recorded quantity differs from the lines sold: a lost or doubled line. */
  stockMismatched: number;
  /** The worst of the two outages for each figure below. */
  requestsPerMinuteWhileDown: number;
  recoveryOverheadSeconds: number;
  orderInversions: number;
  /** The busiest sliding 60 s of the application over its limit, whole section. */
  maxRequestsPerMinute: number;
  busiestRequests: number;
  /** Every request of the application in the section, and the 429s among them. */
  requests: number;
  rateLimited: number;
  /** Whether the stock ledgers settled (nothing pending or open) before the bench read the stock movements, and when. */
  ledgersSettled: boolean;
  /** From the last outage's sales all closed (or given up) to the ledgers settled (or given up), seconds. */
  ledgerSettleSeconds: number;
}

/** The outage targets, for the tables. */
export const OUTAGE_TARGET_TEXT = {
  operatorActions: '= 0',
  failedSales: '= 0',
  duplicates: '= 0',
  requestsPerMinuteWhileDown: '≤ 6',
  recoveryOverheadSeconds: '≤ 30',
  orderInversions: '≤ 0.05',
  maxRequestsPerMinute: '≤ 1.0',
} as const;

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

export function formatOutage(
  o: OutageReport,
  section: (title: string, rows: ReadonlyArray<Record<string, Cell>>) => void,
): void {
  const target = (key: keyof typeof OUTAGE_TARGET_TEXT) => OUTAGE_TARGET_TEXT[key];
  section(
    `Outage: a backlog of sales started during each outage, one application at ${o.requestsPerMinute} requests per ${o.windowMs} ms`,
    [
      {
        key: 'outage.operatorActions',
        value: o.operatorActions,
        target: target('operatorActions'),
        detail: `${o.failedSales} sale(s) failed or parked, ${o.ledgersNeedingOperator} ledger(s) waited for an operator`,
      },
      { key: 'outage.failedSales', value: o.failedSales, target: target('failedSales') },
      {
        key: 'outage.duplicates',
        value: o.duplicates,
        target: target('duplicates'),
        detail: `${o.duplicateDocuments} document(s), ${o.duplicateStockReferences} stock reference(s) twice; ${o.stockMismatched} stock quantity mismatch(es); ledgers ${o.ledgersSettled ? 'settled' : 'NOT settled'} after ${o.ledgerSettleSeconds} s`,
      },
      {
        key: 'outage.requestsPerMinuteWhileDown',
        value: o.requestsPerMinuteWhileDown,
        target: target('requestsPerMinuteWhileDown'),
        detail: `${o.runs.map((r) => `${r.side} ${r.requestsPerMinuteWhileDown}`).join(', ')} (every request: ${o.runs.map((r) => `${r.side} ${r.allRequestsPerMinuteWhileDown}`).join(', ')})`,
      },
      {
        key: 'outage.recoveryOverheadSeconds',
        value: fixed(o.recoveryOverheadSeconds, 1),
        target: target('recoveryOverheadSeconds'),
        detail: o.runs
          .map((r) => `${r.side} ${fixed(r.lastSignedAfterSeconds, 1)} s − ${fixed(r.budgetSeconds, 1)} s`)
          .join(', '),
      },
      {
        key: 'outage.orderInversions',
        value: fixed(o.orderInversions, 3),
        target: target('orderInversions'),
        detail: o.runs.map((r) => `${r.side} ${fixed(r.orderInversions, 3)}`).join(', '),
      },
      {
        key: 'outage.maxRequestsPerMinute',
        value: fixed(o.maxRequestsPerMinute, 3),
        target: target('maxRequestsPerMinute'),
        detail: `${o.busiestRequests} in the busiest 60 s; ${o.rateLimited} 429s of ${o.requests} requests`,
      },
    ],
  );
  section(
    'Outage: each run (seconds from the outage end; attempts are the sales’ own count when it ended)',
    o.runs.map((r) => ({
      side: r.side,
      mode: r.mode,
      's down': r.durationSeconds,
      sales: r.sales,
      signed: r.signed,
      failed: r.failed,
      parked: r.parked,
      open: r.stillOpen,
      'max/60 s down': `${r.requestsPerMinuteWhileDown} (all ${r.allRequestsPerMinuteWhileDown})`,
      'first signed': fixed(r.firstSignedAfterSeconds, 1),
      'last signed': fixed(r.lastSignedAfterSeconds, 1),
      budget: fixed(r.budgetSeconds, 1),
      overhead: fixed(r.recoveryOverheadSeconds, 1),
      inversions: fixed(r.orderInversions, 3),
      'attempts (sum/max)': `${r.attemptsAtEnd.total}/${r.attemptsAtEnd.max} of ${r.attemptsAtEnd.sampled}`,
    })),
  );
  section(
    'Outage: the order the sales were signed in, each by its place in the order they were started',
    o.runs.map((r) => ({ side: r.side, 'signed order': r.signedOrder.join(' ') })),
  );
  section(
    'Outage: requests of the application while each outage lasted, by route and status',
    o.runs.map((r) => ({ side: r.side, routes: JSON.stringify(r.routesWhileDown) })),
  );
}
