/** The longevity section's part of the bench report: its shape and its tables. report.ts includes both. */
import type { PayloadSite } from './longevity-histories.js';
import type { ChangeKind } from './longevity-world.js';
import type { PassName, RunScales, SyncModelDay } from './longevity-math.js';
import type { Cell } from './text-table.js';

export interface PayloadKind {
  /** `<workflow type> <event> <part> <name>`. */
  kind: string;
  bytes: number;
  /** The largest of its kind: where. */
  at: Pick<PayloadSite, 'workflowId' | 'runId' | 'eventId'>;
  /** Records it carries (its longest array or record map), and its size at the full run's scale. */
  records: number;
  /** How many times its records at the full scale (1: bounded, a page or an update's chunk). */
  ratio: number;
  scaledBytes: number;
}

export interface StateSize {
  /** Serialized JSON bytes at the end. */
  bytes: number;
  records: number;
  bytesPerRecord: number;
  /** At the full run's scale (300 invoices a day). */
  scaledBytes: number;
  /** What it gains in a year (per record × records that stay a year), at the full run's scale. */
  growthPerYearBytes: number;
  note: string;
}

export interface LongevityReport {
  k: number;
  windowMs: number;
  requestsPerMinute: number;
  /** Sync interval (real ms) and the day's syncs, then those run to drain what the day left. */
  syncIntervalMs: number;
  syncs: number;
  drainSyncs: number;
  simulatedHours: number;
  /** `sweepHours` the run would need (24 h of simulated time) and what it passed (the workflow takes ≥ 1). */
  sweepHoursWanted: number;
  sweepHoursUsed: number;
  /** settledKept (real minutes) the stock-in was started with: an hour, scaled. */
  settledKeptMinutes: number;
  /** The full world's counts over this run's: what a quick run's per-record figures are scaled by. */
  scales: RunScales;
  world: {
    business: string;
    branches: number;
    items: number;
    suppliers: number;
    mappings: number;
    days: number;
    invoicesPerDay: number;
    invoices: number;
    lines: number;
    stockInFrom: string;
    atStart: Record<string, number>;
    stockedAtStart: { invoices: number; lines: number };
  };
  firstSync: {
    seconds: number;
    /** From the sync's start until the sandbox held every line of the last year's confirmed invoices. */
    stockedSeconds: number;
    stocked: boolean;
    /** Until the stock-in held under 100 invoices (the rest put away in their books). */
    putAwaySeconds: number;
    heldAfter: number;
    requests: number;
    seen: number;
  };
  plan: Record<string, number>;
  maxPayloadBytes: number;
  maxPayloadMeasured: PayloadSite;
  payloadKinds: PayloadKind[];
  maxHistoryEventsPerRun: number;
  longestRun: { workflowType: string; workflowId: string; runId: string; events: number };
  runsByType: Record<string, { runs: number; maxEvents: number }>;
  syncBudgetShare: number;
  budget: {
    /** What the key is: measured in this run, or the full scale's model (a quick run). */
    keyFrom: 'measured' | 'model at full scale';
    measuredShare: number;
    requests: number;
    simulatedMinutes: number;
    rateLimited: number;
    /** Requests of one of the day's syncs, by pass (their listings in the histories), averaged. */
    perSyncByPass: Partial<Record<PassName, number>>;
    daySyncsSeen: number;
    model: { run: SyncModelDay; full: SyncModelDay; fullShare: number };
  };
  oldChangeDelayHours: number;
  delays: {
    byKind: Partial<Record<ChangeKind, { changes: number; delivered: number; maxHours: number; p50Hours: number }>>;
    /** Old changes no listing covered by the run's end (only the sweep lists them): the product's sweep bound. */
    notYetListed: number;
    sweepBoundHours: number;
    keyIncludesSweepBound: boolean;
  };
  duplicates: number;
  duplicatesDetail: {
    eventIdsTwice: number;
    eventFactsTwice: number;
    referenceIdsTwice: number;
    groupsOver: number;
    examples: string[];
  };
  lost: number;
  lostDetail: {
    changes: Array<{ purchaseId: string; kind: ChangeKind; lost: string }>;
    groupsUnder: number;
    groupsUnderOfStart: number;
  };
  stockExact: number;
  stockDetail: { pairs: number; off: Array<{ key: string; expected: number; onHand: number }> };
  tillLatencyRatio: number;
  till: {
    aloneP50Ms: number;
    aloneSales: number;
    dayP50Ms: number;
    daySales: number;
    p90DayMs: number;
    /** The machine's 1-minute load average before and after the day (other work on it moves the till). */
    loadAverage: { beforeDay: number; afterDay: number };
  };
  stateBytes: { book: StateSize; stockIn: StateSize; syncResult: StateSize };
  histories: { runs: number; payloads: number; readSeconds: number };
  seconds: Record<string, number>;
  /** The sink's NDJSON file (removed at the section's end). */
  sinkPath: string;
  notes: string[];
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);
const kb = (bytes: number) => `${fixed(bytes / 1024, 1)} KB`;

export function formatLongevity(
  l: LongevityReport,
  section: (title: string, rows: ReadonlyArray<Record<string, Cell>>) => void,
): void {
  const w = l.world;
  const m = l.maxPayloadMeasured;
  section(
    `Longevity: ${w.business}, ${w.branches} branches, ${w.items} items, ${w.mappings} mappings of ${w.suppliers} suppliers, ${w.invoices} invoices over ${w.days} days (${w.invoicesPerDay} a day; stock-in from ${w.stockInFrom}); ${l.syncs} syncs of a ${fixed(l.simulatedHours, 2)} h day + ${l.drainSyncs} to drain, run ${l.k}× faster (${l.windowMs} ms windows of ${l.requestsPerMinute}); to the full scale: ${Object.entries(
      l.scales,
    )
      .map(([name, x]) => `${name} × ${fixed(x, 1)}`)
      .join(', ')}`,
    [
      {
        key: 'longevity.maxPayloadBytes',
        value: l.maxPayloadBytes,
        target: '< 256 KB',
        detail: `measured ${kb(m.bytes)} in ${m.workflowType} ${m.workflowId} #${m.eventId} ${m.event} ${m.part} ${m.name}; the key at full scale: ${l.payloadKinds[0]?.kind ?? '?'}`,
      },
      {
        key: 'longevity.maxHistoryEventsPerRun',
        value: l.maxHistoryEventsPerRun,
        target: '≤ 10,000',
        detail: `${l.longestRun.workflowType} ${l.longestRun.workflowId}`,
      },
      {
        key: 'longevity.syncBudgetShare',
        value: fixed(l.syncBudgetShare, 4),
        target: '≤ 0.05',
        detail: `${l.budget.keyFrom}; measured ${fixed(l.budget.measuredShare, 4)} (${l.budget.requests} requests over ${fixed(l.budget.simulatedMinutes, 0)} simulated minutes, ${l.budget.rateLimited} 429s); model here ${fixed(l.budget.model.run.perSync, 1)}/sync, full ${fixed(l.budget.model.full.perSync, 1)}/sync`,
      },
      {
        key: 'longevity.oldChangeDelayHours',
        value: fixed(l.oldChangeDelayHours, 2),
        target: '≤ 24',
        detail: `${l.delays.notYetListed} old change(s) no listing reached in the run${l.delays.keyIncludesSweepBound ? `: the sweep's bound ${fixed(l.delays.sweepBoundHours, 2)} h counted` : ''}`,
      },
      {
        key: 'longevity.duplicates',
        value: l.duplicates,
        target: '= 0',
        detail: `event ids twice ${l.duplicatesDetail.eventIdsTwice}, facts twice ${l.duplicatesDetail.eventFactsTwice}, referenceIds twice ${l.duplicatesDetail.referenceIdsTwice}, groups over ${l.duplicatesDetail.groupsOver}`,
      },
      {
        key: 'longevity.lost',
        value: l.lost,
        target: '= 0',
        detail: `${l.lostDetail.changes.length} change(s) listed but not delivered; ${l.lostDetail.groupsUnderOfStart} group(s) of the start under`,
      },
      {
        key: 'longevity.stockExact',
        value: fixed(l.stockExact, 4),
        target: '= 1.0',
        detail: `${l.stockDetail.pairs - l.stockDetail.off.length} of ${l.stockDetail.pairs} (branch, item)`,
      },
      {
        key: 'longevity.tillLatencyRatio',
        value: fixed(l.tillLatencyRatio, 2),
        target: '≤ 1.2',
        detail: `p50 ${l.till.dayP50Ms} ms over ${l.till.daySales} sales beside the syncs ÷ ${l.till.aloneP50Ms} ms over ${l.till.aloneSales} alone; load average ${l.till.loadAverage.beforeDay} → ${l.till.loadAverage.afterDay}`,
      },
    ],
  );
  section(
    'Longevity: largest payload of each kind (bytes as the server holds them), and at the full scale',
    l.payloadKinds.slice(0, 15).map((p) => ({
      kind: p.kind,
      bytes: p.bytes,
      records: p.records,
      '× at full scale': p.ratio,
      'full scale': p.scaledBytes,
    })),
  );
  section(
    'Longevity: delay from a change to its event in the sink and its stock recorded (simulated hours)',
    Object.entries(l.delays.byKind).map(([kind, d]) => ({ kind, ...d })),
  );
  section(
    "Longevity: the sync's requests (one of the day's syncs, by pass; the model's day at this scale and at the full)",
    (['pull', 'pulled', 'pending_review', 'recent', 'sweep', 'left_review', 'full'] as const).map((pass) => ({
      pass,
      'measured per sync': l.budget.perSyncByPass[pass] ?? 0,
      'model per sync (here)': fixed(l.budget.model.run.byPass[pass] / Math.max(1, l.syncs), 2),
      'model per sync (full)': fixed(l.budget.model.full.byPass[pass] / 96, 2),
    })),
  );
  section(
    'Longevity: long-lived state at the end',
    Object.entries(l.stateBytes).map(([state, s]) => ({ state, ...s })),
  );
  section('Longevity: phases (s)', [l.seconds]);
  if (l.notes.length > 0)
    section(
      'Longevity: notes',
      l.notes.map((note) => ({ note })),
    );
}
