/** The stock section's part of the bench report: its shape and its tables. report.ts includes both. */
import type { ExactlyOnce, LagSummary } from './stock-math.js';
import type { ProcessCpu } from './processes.js';
import type { LedgerProfile } from './stock-profile.js';
import type { Cell } from './text-table.js';

/** The exactly-once rule over one run, from the sandbox's records: 0 and 0 when it holds. */
export interface StockExactlyOnce {
  /** (item, action) pairs whose recorded quantity differs from their sold lines'. */
  mismatched: number;
  duplicateReferenceIds: number;
  /** The first few of each, to look at. */
  examples: { mismatched: ExactlyOnce['mismatched']; duplicateReferenceIds: string[] };
}

/** How a ledger was left when the run gave up waiting for it (never when it settled). */
export interface StockLedgerLeft {
  pendingLines: number;
  open: Array<{ referenceId: string; itemId: string; status: string; lines: number; problem?: string }>;
}

/** The backlog run: closed-loop tills on one business, its stock ledger coalescing under the contended budget. */
export interface StockThroughput {
  business: string;
  tills: number;
  /** Scaled minutes: before the steady part (not counted), and the steady part measured. */
  warmMinutes: number;
  steadyMinutes: number;
  /** Sales the sandbox signed in the whole run, and in the steady part. */
  sales: number;
  steadySales: number;
  signedPerMinute: number;
  /** Signed → the movement carrying the line recorded, lines of the steady part's sales, in real seconds. */
  lag: LagSummary;
  /** Every compliance request of the application from the tills' start to the ledger settled, over every sale signed. */
  callsPerSale: number;
  /** The same within the steady part. */
  steadyCallsPerSale: number;
  /**
   * Requests served in the steady part ÷ what the budget allowed over it: near 1, the budget bounded the run; well
   * below, something else did (the machine's CPU at this k, or the worker), and signedPerMinute measures that.
   */
  steadyUtilisation: number;
  requests: number;
  rateLimited: number;
  /** Requests by route (and status when not 2xx) over the whole run. */
  routes: Record<string, number>;
  /** Stock movements recorded (quantity above 0), probes (quantity 0), lines per movement. */
  movements: number;
  probes: number;
  linesPerMovement: number;
  exactlyOnce: StockExactlyOnce;
  /** Real seconds from the tills stopping to every line recorded, nothing open. */
  drainSeconds: number;
  /** CPU of each process over the steady part: a run whose k asks more than the machine has measures the CPU, not the budget. */
  cpu: ProcessCpu[];
  /** Where the ledger's time went (its histories). */
  ledger: LedgerProfile;
  settled: boolean;
  left?: StockLedgerLeft;
}

/** A movement the bench, as the operator, settled from the sandbox's records. */
export interface StockOperatorDecision {
  referenceId: string;
  decision: 'applied' | 'resend';
  problem: string | undefined;
  sales: number;
}

/** The faulted run: commit-then-fail on stock writes and the worker SIGKILLed twice. */
export interface StockOperatorRun {
  business: string;
  tills: number;
  sales: number;
  /** Share of POST /v1/stock/adjustments answered by a fault after the movement was recorded. */
  faultShare: number;
  commitThenFail: number;
  kills: number;
  salesNeedingOperator: number;
  operatorShare: number;
  movementsNeedingOperator: number;
  /** The ledger's own totals at the end. */
  settledByEvidence: number;
  resentAfterEvidence: number;
  probes: number;
  decisions: StockOperatorDecision[];
  exactlyOnce: StockExactlyOnce;
  /** Real seconds from the tills stopping to everything settled. */
  settleSeconds: number;
  ledger: LedgerProfile;
  settled: boolean;
  left?: StockLedgerLeft;
}

export interface StockReport {
  /** The run is k times faster than real time; every figure is scaled back. */
  k: number;
  windowMs: number;
  requestsPerMinute: number;
  /** STOCK_MAX_DELAY in real seconds (the worker got it over k). */
  maxDelaySeconds: number;
  catalogue: number;
  linesPerSale: number;
  throughput: StockThroughput;
  operator: StockOperatorRun;
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

const exactly = (e: StockExactlyOnce) =>
  e.mismatched === 0 && e.duplicateReferenceIds === 0
    ? "every item's recorded quantity = its lines', no referenceId twice"
    : `VIOLATED: ${e.mismatched} item(s) off ${JSON.stringify(e.examples.mismatched)}, ${e.duplicateReferenceIds} referenceId(s) twice ${JSON.stringify(e.examples.duplicateReferenceIds)}`;

export function formatStock(
  s: StockReport,
  section: (title: string, rows: ReadonlyArray<Record<string, Cell>>) => void,
): void {
  const th = s.throughput;
  const op = s.operator;
  section(
    `Stock: ${s.requestsPerMinute} requests/min, L = ${s.linesPerSale} of ${s.catalogue} items, STOCK_MAX_DELAY ${s.maxDelaySeconds} s; run ${s.k}× faster (${s.windowMs} ms windows), figures scaled back`,
    [
      {
        key: 'stock.signedPerMinute',
        value: fixed(th.signedPerMinute, 1),
        target: '≥ 100',
        detail: `${th.steadySales} sales signed in ${th.steadyMinutes} steady minutes after ${th.warmMinutes} (${th.tills} tills always with a sale waiting; ${th.sales} in the run); the budget ${fixed(th.steadyUtilisation * 100, 1)} % used`,
      },
      {
        key: 'stock.lagP99Seconds',
        value: fixed(th.lag.p99Seconds, 1),
        target: '≤ 300',
        detail: `${th.lag.lines} lines: p50 ${fixed(th.lag.p50Seconds, 1)} s, max ${fixed(th.lag.maxSeconds, 1)} s${th.lag.uncarried ? `, ${th.lag.uncarried} NOT carried` : ''}`,
      },
      {
        key: 'stock.callsPerSale',
        value: fixed(th.callsPerSale, 3),
        target: 'reported',
        detail: `${th.requests} requests (${th.rateLimited} 429s), ${fixed(th.steadyCallsPerSale, 3)} in the steady part; ${th.movements} movements of ${fixed(th.linesPerMovement, 2)} lines, ${th.probes} probes`,
      },
      {
        key: 'stock.operatorShare',
        value: fixed(op.operatorShare, 4),
        target: '≤ 1/16',
        detail: `${op.salesNeedingOperator} of ${op.sales} sales (${op.movementsNeedingOperator} movements) under ${Math.round(op.faultShare * 100)} % commit-then-fail (${op.commitThenFail} injected) and ${op.kills} SIGKILLs; ${op.settledByEvidence} settled by evidence, ${op.resentAfterEvidence} re-sent`,
      },
    ],
  );
  section('Stock: how each run ended', [
    {
      run: 'backlog',
      business: th.business,
      'exactly once': exactly(th.exactlyOnce),
      settled: th.settled,
      'after (s)': th.drainSeconds,
      routes: JSON.stringify(th.routes),
    },
    {
      run: 'faults',
      business: op.business,
      'exactly once': exactly(op.exactlyOnce),
      settled: op.settled,
      'after (s)': op.settleSeconds,
    },
  ]);
  for (const [run, left] of [
    ['backlog', th.left],
    ['faults', op.left],
  ] as const) {
    if (left)
      section(
        `Stock: the ${run} run's ledger NOT settled: ${left.pendingLines} lines pending, open movements`,
        left.open.map((m) => ({ ...m })),
      );
  }
  section(
    "Stock: CPU of each process over the backlog's steady part",
    th.cpu.map((c) => ({ ...c })),
  );
  const spread = (x: { p50: number; p90: number; max: number }) => `${x.p50} / ${x.p90} / ${x.max}`;
  section(
    "Stock: each ledger's histories (ms as p50 / p90 / max)",
    (
      [
        ['backlog', th.ledger],
        ['faults', op.ledger],
      ] as const
    ).map(([run, l]) => ({
      run,
      runs: l.runs,
      events: l.events,
      'hand-overs': l.handOvers,
      'task wait': spread(l.workflowTaskWaitMs),
      'task run': spread(l.workflowTaskRunMs),
      movements: l.movements,
      'movement queue wait': spread(l.movementWaitMs),
      'not started in time': l.notStartedInTime,
      'timed out running': l.timedOutRunning,
      'tasks failed': l.workflowTaskFailures,
    })),
  );
  for (const [run, l] of [
    ['backlog', th.ledger],
    ['faults', op.ledger],
  ] as const) {
    if (l.workflowTaskFailures > 0)
      section(
        `Stock: the ${run} run's ledger: workflow tasks that failed (each costs about 10 s before the retry)`,
        Object.entries(l.failures).map(([failure, times]) => ({ failure, times })),
      );
  }
  if (op.decisions.length > 0)
    section(
      "Stock: movements the bench settled as the operator (from the sandbox's records)",
      op.decisions.map((d) => ({ ...d })),
    );
}
