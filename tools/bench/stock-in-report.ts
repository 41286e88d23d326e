/** The stock-in section's part of the bench report: its shape and its tables. report.ts includes both. */
import type { Segment } from './history.js';
import type { LagSummary } from './stock-math.js';
import type { LearnedMatches, QuantityCheck, StockInGroup, StockInRequests } from './stock-in-math.js';
import type { Cell } from './text-table.js';

export interface StockInPass {
  pass: number;
  /** `schedule`: the business's schedule triggered (the sync gets the last one's result); `direct`: a sync started
   * on its own, which knows nothing told before and tells every confirmed invoice again. */
  how: 'schedule' | 'direct';
  /** What the bench did on the dashboard just before it. */
  before: string;
  /** From the start of the backlog to the pass's start, and its length (s). */
  startedAtSeconds: number;
  seconds: number;
  /** Invoices the sync listed. */
  seen: number;
}

/** One comparison of the till during a backlog with the till alone (before and after it). */
export interface StockInTillRun {
  /** p50 during the backlog ÷ p50 alone. */
  ratio: number;
  backlogP50Ms: number;
  backlogSales: number;
  aloneP50Ms: number;
  aloneSales: number;
  /** From the run's first confirmation to its lines recorded (s). */
  seconds: number;
  drained: boolean;
}

export interface StockInReport {
  /** The run is k times faster than real time; the lag is scaled back. */
  k: number;
  windowMs: number;
  requestsPerMinute: number;
  /** STOCK_MAX_DELAY in scaled seconds (the worker got it over k). */
  maxDelaySeconds: number;
  business: string;
  items: number;
  invoices: number;
  /** Invoices of each of the till's later runs (a pass of new ones each). */
  laterRunInvoices: number;
  linesPerInvoice: number;
  /** Lines in a supplier's own wording (no item's name), and the distinct wordings a person mapped. */
  unmatchedLines: number;
  wordings: number;
  /** Invoices unconfirmed in the third pass (what they added taken back). */
  takenBack: number;
  passes: StockInPass[];
  duplicates: number;
  duplicateReferenceIds: string[];
  /** (item, action, price) groups recorded above / below what the invoices' lines make. */
  over: StockInGroup[];
  under: StockInGroup[];
  quantityExact: number;
  /** Items whose quantity on hand is off: expected (opening + stocked purchases − sales + restocks) and held. */
  quantityOff: QuantityCheck[];
  requestsPerLine: number;
  /** Lines the stock-in should add (every line of every invoice), and what it says it added. */
  linesAdded: number;
  linesAddedByStockIn: number | undefined;
  requests: StockInRequests;
  /** The sync's own requests (pulls and lists) over the backlog: not the stock-in's. */
  syncRequests: number;
  rateLimited: number;
  routes: Record<string, number>;
  /** ADD movements recorded and lines per movement (the ledger merges lines of one item and price). */
  addMovements: number;
  linesPerAddMovement: number;
  /** The median of the runs' ratios (tillLatencyRatioMedian, under the key's old name). */
  tillLatencyRatio: number;
  tillLatencyRatioMedian: number;
  /** Each run's ratio: the first with the whole run (passes, mapping, restart), then a pass of new invoices each. */
  tillLatencyRatioRuns: number[];
  tillRuns: StockInTillRun[];
  /** Every run's backlog sales pooled ÷ every sale alone, and that ratio's bootstrap interval. */
  tillLatencyRatioPooled: number;
  tillLatencyRatioInterval: { low: number; high: number; level: number };
  tillP50Ms: { alone: number; before: number; after: number; backlog: number; withRestart: number };
  tillSales: { alone: number; backlog: number; ofRestart: number; total: number };
  /**
   * Each timed sale of the till, to the signed receipt in hand (ms, sorted): alone before the first run, during the
   * runs (less the restart's), alone after them.
   */
  tillMs: { before: number[]; backlog: number[]; after: number[] };
  /** The signing's wait in the queue (the limiter's next slot when the budget is taken), p50 and p90. */
  tillSignQueueMs: { alone: { p50: number; p90: number }; backlog: { p50: number; p90: number } };
  /** Median of each step of the till's sales to the receipt in hand, alone and during the backlog. */
  tillProfile: { alone: Segment[]; backlog: Segment[] };
  /** The till's sales during a run's backlog that took over twice the p50 alone: when (s from its start), how long. */
  tillSlowSales: Array<{ run: number; atSeconds: number; ms: number }>;
  lag: LagSummary;
  learnedMatchShare: number;
  learned: LearnedMatches;
  /** The stock-in's own totals at the end (its query). */
  matchedBy: Record<string, number> | undefined;
  kill: { afterPassStartSeconds: number; addMovementsBefore: number; restartSeconds: number };
  /**
   * From the first confirmation to the last of the first run's stock-in movements recorded, and to everything settled
   * (every run's, s).
   */
  backlogSeconds: number;
  settleSeconds: number;
  /** The stock-in's lines were all recorded, and the ledger drained, before the bench gave up waiting. */
  backlogDrained: boolean;
  settled: boolean;
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

export function formatStockIn(
  s: StockInReport,
  section: (title: string, rows: ReadonlyArray<Record<string, Cell>>) => void,
): void {
  const r = s.requests;
  section(
    `Stock-in: ${s.invoices} confirmed supplier invoices of ${s.linesPerInvoice} lines (${s.unmatchedLines} in ${s.wordings} suppliers' own wordings, mapped half-way through), then ${s.tillRuns.length - 1} × ${s.laterRunInvoices} more, for ${s.items} items while a till sells; ${s.requestsPerMinute} requests/min, STOCK_MAX_DELAY ${s.maxDelaySeconds} s; run ${s.k}× faster (${s.windowMs} ms windows)`,
    [
      {
        key: 'stockIn.duplicates',
        value: s.duplicates,
        target: '= 0',
        detail: `${s.duplicateReferenceIds.length} referenceId(s) recorded twice, ${s.over.length} (item, action, price) group(s) above their lines${s.under.length ? `; ${s.under.length} BELOW` : ''}`,
      },
      {
        key: 'stockIn.quantityExact',
        value: fixed(s.quantityExact, 4),
        target: '= 1.0',
        detail: `${s.items - s.quantityOff.length} of ${s.items} items at opening + stocked purchases − sales + restocks (${s.takenBack} invoice(s) taken back; ${s.tillSales.total} sales)`,
      },
      {
        key: 'stockIn.requestsPerLine',
        value: fixed(s.requestsPerLine, 3),
        target: '≤ 1',
        detail: `${r.attributed} requests (${r.adjustments} adjustments − ${r.saleMovements} sales' movements + ${r.itemLists} item lists; ${r.recorded} at the least: ${r.stockInMovements} movements recorded) ÷ ${s.linesAdded} lines added; ${s.addMovements} ADD movements of ${fixed(s.linesPerAddMovement, 2)} lines`,
      },
      {
        key: 'stockIn.tillLatencyRatio',
        value: fixed(s.tillLatencyRatio, 2),
        target: '≤ 1.2',
        detail: `the median of ${s.tillRuns.length} runs' ratios (below); pooled: p50 ${s.tillP50Ms.backlog} ms over ${s.tillSales.backlog} sales during the backlogs ÷ ${s.tillP50Ms.alone} ms over ${s.tillSales.alone} alone = ${fixed(s.tillLatencyRatioPooled, 2)}, ${Math.round(s.tillLatencyRatioInterval.level * 100)} %: ${s.tillLatencyRatioInterval.low}–${s.tillLatencyRatioInterval.high}; ${s.tillSales.ofRestart} held by the restart left out (with them the first run's p50 is ${s.tillP50Ms.withRestart} ms)`,
      },
      {
        key: 'stockIn.tillLatencyRatioMedian',
        value: fixed(s.tillLatencyRatioMedian, 2),
        target: '≤ 1.2',
        detail: `the median of ${s.tillLatencyRatioRuns.join(', ')} (reported)`,
      },
      {
        key: 'stockIn.tillLatencyRatioRuns',
        value: s.tillLatencyRatioRuns.map((r) => fixed(r, 2)).join(', '),
        target: '—',
        detail: s.tillRuns
          .map(
            (r, i) =>
              `run ${i + 1}${i === 0 ? ' (the whole run)' : ` (${s.laterRunInvoices} new invoices)`}: ${r.backlogP50Ms} ms over ${r.backlogSales} in ${r.seconds} s${r.drained ? '' : ' NOT recorded'} ÷ ${r.aloneP50Ms} over ${r.aloneSales}`,
          )
          .join('; '),
      },
      {
        key: 'stockIn.tillLatencyRatioLow',
        value: fixed(s.tillLatencyRatioInterval.low, 2),
        target: '≤ 1.2',
        detail: `the low end of the pooled ratio's ${Math.round(s.tillLatencyRatioInterval.level * 100)} % bootstrap interval, over every run's sales: what CI asserts`,
      },
      {
        key: 'stockIn.lagP99Seconds',
        value: fixed(s.lag.p99Seconds, 1),
        target: '≤ 300',
        detail: `${s.lag.lines} lines: p50 ${fixed(s.lag.p50Seconds, 1)} s, max ${fixed(s.lag.maxSeconds, 1)} s${s.lag.uncarried ? `, ${s.lag.uncarried} NOT carried` : ''}`,
      },
      {
        key: 'stockIn.learnedMatchShare',
        value: fixed(s.learnedMatchShare, 4),
        target: '= 1.0',
        detail: `${s.learned.matched} of ${s.learned.lines} lines in a wording a person mapped once (${s.learned.mappedByPerson} mapped): ${s.learned.waitingThen} waiting then, ${s.learned.arrivedAfter} on later invoices`,
      },
    ],
  );
  section(
    'Stock-in: the sync passes over the same invoices',
    s.passes.map((p) => ({ ...p })),
  );
  section('Stock-in: how the run went', [
    {
      "first run's backlog (s)": s.backlogSeconds,
      drained: s.backlogDrained,
      'settled (s)': s.settleSeconds,
      settled: s.settled,
      'killed (s after pass 2 began)': `${s.kill.afterPassStartSeconds} (${s.kill.addMovementsBefore} ADD movements recorded since it began), restart ${s.kill.restartSeconds} s`,
      'lines added (stock-in says)': s.linesAddedByStockIn,
      'matched by': JSON.stringify(s.matchedBy ?? {}),
      'sync requests': s.syncRequests,
      '429s': s.rateLimited,
    },
  ]);
  section("Stock-in: the till's signing in the queue, p50 / p90 (ms)", [
    {
      alone: `${s.tillSignQueueMs.alone.p50} / ${s.tillSignQueueMs.alone.p90}`,
      backlog: `${s.tillSignQueueMs.backlog.p50} / ${s.tillSignQueueMs.backlog.p90}`,
      'slow sales during the backlogs (run / s from its start: ms)':
        s.tillSlowSales.map((x) => `${x.run}/${x.atSeconds}: ${x.ms}`).join(', ') || 'none',
    },
  ]);
  section(
    "Stock-in: median of each step of the till's sales, alone and during the backlog (ms)",
    s.tillProfile.backlog.map((x, i) => {
      const alone = s.tillProfile.alone[i];
      return { step: x.label, backlog: x.ms, alone: alone?.label === x.label ? alone.ms : '' };
    }),
  );
  section('Stock-in: requests of the application during the backlog', [s.routes]);
  if (s.over.length + s.under.length > 0)
    section(
      'Stock-in: (item, action, price) groups whose recorded quantity is not their lines',
      [...s.over, ...s.under].slice(0, 20).map((g) => ({ ...g })),
    );
  if (s.quantityOff.length > 0)
    section(
      'Stock-in: items whose quantity on hand is off',
      s.quantityOff.slice(0, 20).map((q) => ({ ...q, onHand: q.onHand ?? 'none' })),
    );
}
