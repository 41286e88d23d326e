/** The bench's report: its shape, the targets it is judged by, and the JSON file and text tables written from it. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Segment } from './history.js';
import type { Summary } from './stats.js';
import { formatTable, type Cell } from './text-table.js';

export { formatTable };

export const SECTIONS = ['latency', 'calls', 'history', 'budget', 'throughput', 'fairness', 'priority'] as const;
export type Section = (typeof SECTIONS)[number];

export interface LatencyReport {
  saleToSignedMs: Summary;
  floorMs: Summary;
  ratio: number;
  /** The activity whose result carried the signed receipt (found in the history, not assumed). */
  signingActivity: string | undefined;
  /** A till's one update-with-start call (start the sale + `awaitReceipt`) until the receipt values are in its hands. */
  tillReceiptMs: Summary;
  /** `executeWorkflow` of the floor workflow until its result is in the caller's hands: the till's floor. */
  floorExecuteMs: Summary;
  /** tillReceiptMs.p50 / floorExecuteMs.p50. */
  tillReceiptRatio: number;
  /** Median of each step of the till's call and of the floor by executeWorkflow, to the caller's hands (when tillReceiptRatio is unmet). */
  tillProfile?: { till: Segment[]; floor: Segment[]; tillRunsLeftOut: number };
  /** Median of each step from the client's start to the recorded receipt / floor result (when the ratio is unmet). */
  profile?: { sale: Segment[]; floor: Segment[]; saleRunsLeftOut: number };
}

export interface CallsReport {
  immediate: number;
  asyncCallback: number;
  /** L: stock-tracked lines of each sale. */
  lines: number;
  /** Requests by route for each path, for when a count is off. */
  routes: { immediate: Record<string, number>; asyncCallback: Record<string, number> };
}

export interface BudgetReport {
  utilisation: number;
  rateLimitedShare: number;
  windows: number;
  windowMs: number;
  limitPerWindow: number;
  workerRequestsPerMinute: number;
  productive: number;
  allowed: number;
  requests: number;
  rateLimited: number;
  sales: number;
  perWindow: Array<{ counted: number; gapBeforeMs: number }>;
}

export interface ProcessCpu {
  process: string;
  cpuSeconds: number;
  /** CPU time over wall time, in % of one core. */
  percentOfOneCore: number;
}

/** Seconds from the first start to the last receipt recorded, and to the last sale closed (CPU is read over the latter). */
export interface ThroughputSpan {
  signedSeconds: number;
  closedSeconds: number;
  /** The sale that closed last and the steps of its history (from the first start) that took ≥ 1 s. */
  slowestClose?: { workflowId: string; closedAfterSeconds: number; longSteps: Segment[] };
  /** Sales still open 2 minutes after the run (waiting for an operator), terminated so no later run meets them. */
  stillOpen?: string[];
}

export interface ThroughputReport {
  salesPerSecond: { workers1: number; workers2?: number };
  sales: number;
  cpu: { workers1: ProcessCpu[]; workers2?: ProcessCpu[] };
  spans: { workers1: ThroughputSpan; workers2?: ThroughputSpan };
}

export interface FairnessReport {
  ratio: number;
  /** Median wait in the queue (scheduled → started) of each of B's activities up to its receipt, alone and flooded. */
  waitsMs: { alone: Record<string, number>; flooded: Record<string, number> };
  /** Median of each step of B's sales from start to receipt recorded (most common shape), alone and flooded. */
  profile: { alone: Segment[]; flooded: Segment[] };
  aloneP50Ms: number;
  floodedP50Ms: number;
  flood: number;
  sales: number;
  requestsPerMinute: number;
}

export interface PriorityReport {
  tillWaitMs: Summary;
  idleWaitMs: Summary;
  signingActivity: string | undefined;
  backlog: { stockSales: number; stockLinesEach: number; registrations: number; purchasesSyncs: number };
  /** Backlog workflows still running when the last till sale closed: above 0, the tills really were behind bulk work. */
  backlogStillRunning: number;
  /** Median wait of each activity of the till sales up to the receipt, behind the backlog. */
  tillActivityWaitsMs: Record<string, number>;
  requestsPerMinute: number;
}

export interface BenchReport {
  server: 'dev' | 'postgres';
  temporalAddress: string;
  machine: { cpus: number; cpuModel: string; node: string; platform: string };
  date: string;
  commit: string;
  mode: 'quick' | 'full';
  sections: Section[];
  wallSeconds: Record<string, number>;
  samples: Record<string, number>;
  latency?: LatencyReport;
  callsPerSale?: CallsReport;
  historyEvents?: { immediate: number; distinctCounts: number[] };
  budget?: BudgetReport;
  throughput?: ThroughputReport;
  fairness?: FairnessReport;
  priority?: PriorityReport;
  targets: TargetResult[];
}

export interface TargetResult {
  key: string;
  target: string;
  value: number | undefined;
  met: boolean;
}

interface Target {
  key: string;
  target: (r: BenchReport) => string;
  value: (r: BenchReport) => number | undefined;
  met: (value: number, r: BenchReport) => boolean;
}

const TARGETS: Target[] = [
  { key: 'latency.ratio', target: () => '≤ 1.3', value: (r) => r.latency?.ratio, met: (v) => v <= 1.3 },
  { key: 'latency.tillReceiptRatio', target: () => '≤ 1.3', value: (r) => r.latency?.tillReceiptRatio, met: (v) => v <= 1.3 },
  {
    key: 'callsPerSale.immediate',
    target: (r) => `= 1 + L = ${1 + (r.callsPerSale?.lines ?? NaN)}`,
    value: (r) => r.callsPerSale?.immediate,
    met: (v, r) => v === 1 + r.callsPerSale!.lines,
  },
  {
    key: 'callsPerSale.asyncCallback',
    target: (r) => `≤ 2 + L = ${2 + (r.callsPerSale?.lines ?? NaN)}`,
    value: (r) => r.callsPerSale?.asyncCallback,
    met: (v, r) => v <= 2 + r.callsPerSale!.lines,
  },
  { key: 'historyEvents.immediate', target: () => '≤ 30', value: (r) => r.historyEvents?.immediate, met: (v) => v <= 30 },
  { key: 'budget.utilisation', target: () => '≥ 0.97', value: (r) => r.budget?.utilisation, met: (v) => v >= 0.97 },
  { key: 'budget.rateLimitedShare', target: () => '≤ 0.01', value: (r) => r.budget?.rateLimitedShare, met: (v) => v <= 0.01 },
  { key: 'throughput.salesPerSecond.workers1', target: () => '≥ 25', value: (r) => r.throughput?.salesPerSecond.workers1, met: (v) => v >= 25 },
  { key: 'fairness.ratio', target: () => '≤ 2', value: (r) => r.fairness?.ratio, met: (v) => v <= 2 },
];

/** The keys of every target, as `--assert=` names them. */
export const TARGET_KEYS: readonly string[] = TARGETS.map((t) => t.key);

/** Every target whose section was measured, with its value and whether it is met (a NaN is never met). */
export function checkTargets(report: Omit<BenchReport, 'targets'>): TargetResult[] {
  return TARGETS.flatMap((t) => {
    const value = t.value(report as BenchReport);
    if (value === undefined) return [];
    return [{ key: t.key, target: t.target(report as BenchReport), value, met: Number.isFinite(value) && t.met(value, report as BenchReport) }];
  });
}

export const unmet = (report: BenchReport) => report.targets.filter((t) => !t.met);

export function writeReport(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}

const yes = (met: boolean) => (met ? 'met' : 'UNMET');

/** The report as text: the targets first, then each measured section with its details. */
export function formatReport(r: BenchReport): string {
  const out: string[] = [];
  const section = (title: string, rows: ReadonlyArray<Record<string, Cell>>) => out.push('', title, formatTable(rows));
  out.push(
    `bench: ${r.mode} run on ${r.server} server (${r.temporalAddress}), ${r.machine.cpus} cpus (${r.machine.cpuModel}), node ${r.machine.node}, commit ${r.commit}, ${r.date}`,
  );
  section('Targets', r.targets.map((t) => ({ key: t.key, value: t.value, target: t.target, result: yes(t.met) })));
  if (r.latency) {
    const l = r.latency;
    section(`Latency (ms), immediate path, one sale at a time; receipt brought by activity ${l.signingActivity ?? '?'}`, [
      { key: 'latency.saleToSignedMs', ...l.saleToSignedMs },
      { key: 'latency.floorMs', ...l.floorMs },
      { key: 'latency.ratio (p50 / floor p50)', p50: l.ratio },
    ]);
    section('Latency (ms), a till: one update-with-start call (awaitReceipt) to the receipt in its hands, against executeWorkflow of the floor', [
      { key: 'latency.tillReceiptMs', ...l.tillReceiptMs },
      { key: 'latency.floorExecuteMs', ...l.floorExecuteMs },
      { key: 'latency.tillReceiptRatio (p50 / floor p50)', p50: l.tillReceiptRatio },
    ]);
    if (l.tillProfile) {
      section(`Profile: median of each step, till's update-with-start (${l.tillProfile.tillRunsLeftOut} runs of another shape left out)`, l.tillProfile.till.map((s) => ({ step: s.label, ms: s.ms })));
      section('Profile: median of each step, floor by executeWorkflow', l.tillProfile.floor.map((s) => ({ step: s.label, ms: s.ms })));
    }
    if (l.profile) {
      section(`Profile: median of each step, sale (${l.profile.saleRunsLeftOut} runs of another shape left out)`, l.profile.sale.map((s) => ({ step: s.label, ms: s.ms })));
      section('Profile: median of each step, floor workflow', l.profile.floor.map((s) => ({ step: s.label, ms: s.ms })));
    }
  }
  if (r.callsPerSale) {
    const c = r.callsPerSale;
    section('Compliance requests per sale (sandbox log, item cache warm)', [
      { key: 'callsPerSale.immediate', value: c.immediate, target: `= ${1 + c.lines}`, routes: JSON.stringify(c.routes.immediate) },
      { key: 'callsPerSale.asyncCallback', value: c.asyncCallback, target: `≤ ${2 + c.lines}`, routes: JSON.stringify(c.routes.asyncCallback) },
      { key: 'callsPerSale.lines', value: c.lines },
    ]);
  }
  if (r.historyEvents) section('History events', [{ key: 'historyEvents.immediate', value: r.historyEvents.immediate, target: '≤ 30', seen: r.historyEvents.distinctCounts.join(',') }]);
  if (r.budget) {
    const b = r.budget;
    section(`Rate budget: ${b.sales} sales as a backlog, ${b.limitPerWindow} requests per ${b.windowMs} ms window, worker set to ${b.workerRequestsPerMinute}/min`, [
      { key: 'budget.utilisation', value: Number(b.utilisation.toFixed(3)), target: '≥ 0.97', windows: b.windows, productive: b.productive, allowed: b.allowed },
      { key: 'budget.rateLimitedShare', value: Number(b.rateLimitedShare.toFixed(4)), target: '≤ 0.01', '429s': b.rateLimited, requests: b.requests },
    ]);
    if (b.utilisation < 0.97) {
      section(`Profile: requests counted in each complete window (limit ${b.limitPerWindow}) and the idle gap before it`, b.perWindow.map((w, i) => ({ window: i + 1, counted: w.counted, 'of limit': Number((w.counted / b.limitPerWindow).toFixed(3)), 'gap before (ms)': w.gapBeforeMs })));
    }
  }
  if (r.throughput) {
    const t = r.throughput;
    section(`Throughput: ${t.sales} sales started at once, unthrottled`, [
      { key: 'throughput.salesPerSecond.workers1', value: t.salesPerSecond.workers1, target: '≥ 25', 'to last receipt (s)': t.spans.workers1.signedSeconds, 'to last close (s)': t.spans.workers1.closedSeconds },
      { key: 'throughput.salesPerSecond.workers2', value: t.salesPerSecond.workers2, 'to last receipt (s)': t.spans.workers2?.signedSeconds, 'to last close (s)': t.spans.workers2?.closedSeconds },
    ]);
    for (const [run, span] of Object.entries(t.spans)) {
      if (span?.stillOpen?.length) {
        section(`Throughput ${run}: sales still open 2 minutes after the run (waiting for an operator), terminated`, span.stillOpen.map((workflowId) => ({ workflowId })));
      }
      if (span?.slowestClose?.longSteps.length) {
        section(`Throughput ${run}: steps of ≥ 1 s in the history of the sale that closed last (${span.slowestClose.workflowId}, ${span.slowestClose.closedAfterSeconds} s)`, span.slowestClose.longSteps.map((s) => ({ step: s.label, ms: s.ms })));
      }
    }
    section('Throughput: CPU of each process from the first start to the last close', [
      ...t.cpu.workers1.map((c) => ({ run: 'workers1', ...c })),
      ...(t.cpu.workers2 ?? []).map((c) => ({ run: 'workers2', ...c })),
    ]);
  }
  if (r.fairness) {
    const f = r.fairness;
    section(`Fairness: ${f.sales} sales of business B while A floods ${f.flood}, budget ${f.requestsPerMinute}/min`, [
      { key: 'fairness.ratio', value: f.ratio, target: '≤ 2', 'B p50 flooded (ms)': f.floodedP50Ms, 'B p50 alone (ms)': f.aloneP50Ms },
    ]);
    if (f.ratio > 2) {
      section('Profile: median wait of B\'s activities in the queue (scheduled → started, ms)', Object.keys({ ...f.waitsMs.alone, ...f.waitsMs.flooded }).map((a) => ({ activity: a, alone: f.waitsMs.alone[a], flooded: f.waitsMs.flooded[a] })));
      section('Profile: median of each step of B\'s sales, flooded (ms)', f.profile.flooded.map((s) => ({ step: s.label, ms: s.ms })));
      section('Profile: median of each step of B\'s sales, alone (ms)', f.profile.alone.map((s) => ({ step: s.label, ms: s.ms })));
    }
  }
  if (r.priority) {
    const p = r.priority;
    section(
      `Priority: till sale's ${p.signingActivity ?? 'signing'} activity waiting for the budget (${p.requestsPerMinute}/min) behind ${p.backlog.stockSales} sales × ${p.backlog.stockLinesEach} stock lines, ${p.backlog.registrations} registrations, ${p.backlog.purchasesSyncs} purchases syncs`,
      [
        { key: 'priority.tillWaitMs', ...p.tillWaitMs, target: 'reported' },
        { key: '(same sales, idle budget)', ...p.idleWaitMs },
      ],
    );
    section(`Priority: median queue wait of each till activity up to the receipt (${p.backlogStillRunning} backlog workflows still running after the last till sale)`, Object.entries(p.tillActivityWaitsMs).map(([activity, ms]) => ({ activity, ms })));
  }
  section('Wall time (s)', [Object.fromEntries(Object.entries(r.wallSeconds).map(([k, v]) => [k, v]))]);
  return out.join('\n');
}
