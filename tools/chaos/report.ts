/** What a chaos run writes (bench/chaos.json) and the one line it ends with. */
import type { DaysVerdict } from './days.js';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FaultRuleInput } from '../../sandbox/shared/faults.js';
import type { RequestsSummary } from '../../sandbox/inspector.js';
import type { ApplicationVerdict, StockVerdict, Totals, Verdicts } from './checker.js';
import { balancesOff } from './exactly-once.js';
import type { IncomingVerdict } from './incoming.js';
import type { Storm } from './fault-plan.js';
import type { Operation } from './history.js';
import type { StockInCounts } from './stock-ins.js';
import type { StockInPlan } from './supplier-invoices.js';
import type { LedgerBacklog } from './ledgers.js';
import { outagesText, type OutageExposure } from './outages.js';
import type { TenantsFileContent } from './tenants-file.js';
import type { WorkerEvent } from './workers.js';

export interface ChaosParameters {
  sales: number;
  faultSeconds: number;
  settleTimeoutSeconds: number;
  /** The applications' budgets added up; each application's own is in `tenants` and `verdicts.applications`. */
  totalRequestsPerMinute: number;
  /** The sandbox's rate-limit window, the one each budget is per. */
  rateWindowMs: number;
  workers: number;
  workerKillEverySeconds: number;
}

export interface ChaosReport {
  seed: number;
  /** Each control unit's day: the worker's delivered summary against the sandbox's own sum (days.ts). */
  days?: DaysVerdict;
  parameters: ChaosParameters;
  startedAt: string;
  commit: string | null;
  /** Times in ms since the faults started (`faultsStartedAt`, to compare with the sandbox's timestamps). */
  timeline: {
    faultsStartedAt: string;
    faultsStoppedAtMs: number;
    serverRestart: { atMs: number; downMs: number } | null;
    storms: Array<Pick<Storm, 'atMs' | 'durationMs'>>;
    /** The service and authority outages as the sandbox timed them, and the sales started during each. */
    outages: OutageExposure[];
    settledAtMs: number | null;
    endedAtMs: number;
  };
  /** How much of the run met the faults: sale documents first filed while they were on. */
  exposure: { salesFiledDuringFaults: number; salesFiledAfter: number };
  /** The tenants file the workers served (keys are named by variable, never written). */
  tenants: TenantsFileContent;
  /**
   * The supplier invoices handed to the sandbox, their reviews and the syncs asked (times since the faults started),
   * and the stock-ins' own counts at the end (reported, never checked; null when they could not be read).
   */
  stockIn: StockInPlan & { counts: StockInCounts | null };
  faultRules: FaultRuleInput[];
  /** Counted by the sandbox's fault engine: what was actually injected. */
  faultsInjected: Record<string, number>;
  requests: Omit<RequestsSummary, 'faultsInjected'>;
  /** The request log the budgets were checked on: compliance requests read, and any that left the log unread. */
  requestLog: { compliance: number; missed: number };
  workerEvents: WorkerEvent[];
  workerKills: number;
  /** Every operator action by kind (sales' confirmations, re-sends and retries; ledgers' settleMovement), and their total. */
  operator: { actions: Record<string, number>; total: number; failedRounds: number };
  /** The stock ledgers' backlog (their getState) when the checker last read: what was still unsent or unsettled. */
  ledgers: LedgerBacklog | null;
  operations: Operation[];
  verdicts: Verdicts;
  settled: boolean;
  /** Seconds from faults stopping to every expectation holding. */
  settledSeconds: number | null;
  result: string;
}

/** The exactly-once rule in words: what the run's last line says of stock. */
export function exactlyOnceText(
  stock: Pick<
    StockVerdict,
    | 'lines'
    | 'movements'
    | 'merged'
    | 'violations'
    | 'duplicates'
    | 'items'
    | 'missingQuantity'
    | 'extraQuantity'
    | 'withoutReference'
  >,
): string {
  if (stock.violations === 0)
    return `every line in exactly one recorded movement (${stock.lines} lines, ${stock.movements} movements, ${stock.merged} merged)`;
  const twice = stock.duplicates.reduce((n, d) => n + d.recorded - 1, 0);
  const off = stock.items.reduce((n, b) => n + balancesOff(b), 0);
  const parts = [
    `${twice} referenceId record(s) repeated`,
    `${off} item balance(s) off (${stock.missingQuantity} missing, ${stock.extraQuantity} extra)`,
    ...(stock.withoutReference > 0 ? [`${stock.withoutReference} without referenceId`] : []),
  ];
  return `${stock.violations} exactly-once violation${stock.violations === 1 ? '' : 's'} (${parts.join(', ')}; ${stock.lines} lines, ${stock.movements} movements)`;
}

/** Incoming stock in words: the invoices, what counted, and the units the net rule expected and found. */
export function incomingText(incoming: IncomingVerdict): string {
  const absent =
    incoming.notInSandbox.length > 0 ? `, ${incoming.notInSandbox.length} invoice(s) not in the sandbox` : '';
  return (
    `incoming stock: ${incoming.invoices} supplier invoices (${incoming.counted} confirmed from the start date, ` +
    `${incoming.lines} lines), ${incoming.expectedQuantity} units expected, ${incoming.recordedQuantity} recorded, ` +
    `${incoming.mismatches} net mismatch${incoming.mismatches === 1 ? '' : 'es'}${absent}`
  );
}

/** How the stock-ins' own lines went, alone in a movement: what the run's summary adds to the figures. */
export function incomingMovementsText(incoming: Pick<IncomingVerdict, 'movements'>): string {
  return `${incoming.movements.add} stock-in lines added and ${incoming.movements.deduct} taken back alone in a movement`;
}

export function resultLine(
  verdicts: Pick<Verdicts, 'totals' | 'stock'> & Partial<Pick<Verdicts, 'incoming'>>,
  operatorActions: number,
  settledSeconds: number | null,
  settleTimeoutSeconds: number,
  outages?: readonly OutageExposure[],
): string {
  const { totals, stock, incoming } = verdicts;
  const settled =
    settledSeconds === null
      ? `not settled within ${settleTimeoutSeconds} s`
      : `settled in ${settledSeconds.toFixed(1)} s`;
  const unread =
    totals.requestsMissed > 0 ? `, ${totals.requestsMissed} requests unread (budgets not checked whole)` : '';
  return (
    `chaos: ${totals.sales} sales over ${totals.applications} applications, ${totals.duplicates} duplicate documents, ${totals.lost} lost, ` +
    `${totals.stockErrors} stock errors, ${totals.creditNoteErrors} credit-note errors, ${exactlyOnceText(stock)}, ` +
    (incoming === undefined || incoming.invoices === 0 ? '' : `${incomingText(incoming)}, `) +
    `${totals.overBudget} over budget (busiest window ${totals.busiestRatio.toFixed(2)} of a limit)${unread}, ` +
    (outages === undefined ? '' : `${outagesText(outages)}, `) +
    `${operatorActions} operator action${operatorActions === 1 ? '' : 's'}, ${settled}`
  );
}

/** One application's part, printed before the result line. */
export function applicationLine(application: ApplicationVerdict): string {
  const { budget } = application;
  const businesses = application.businesses.length === 1 ? '1 business' : `${application.businesses.length} businesses`;
  return (
    `[chaos] ${application.name} (${application.applicationId}, ${businesses}): ${application.sales} sales, ${application.signed} signed, ` +
    `${application.duplicates} duplicates, ${application.lost} lost, ${application.stockErrors} stock errors, ${application.creditNoteErrors} credit-note errors, ` +
    `${application.exactlyOnceViolations} exactly-once violations; ` +
    `at most ${budget.busiestWindow.requests} requests in ${budget.windowMs / 1000} s of ${budget.limit} allowed (${budget.ratio.toFixed(2)})` +
    `${budget.over ? ' OVER BUDGET' : ''}, ${budget.requests} requests, ${budget.rateLimited} refused 429`
  );
}

/**
 * Exit 0 only when nothing is wrong (every stock line in exactly one recorded movement, incoming stock right too),
 * every application kept to its budget, and everything settled in time.
 */
export function passed(totals: Totals, settledSeconds: number | null): boolean {
  return (
    totals.duplicates === 0 &&
    totals.lost === 0 &&
    totals.stockErrors === 0 &&
    totals.creditNoteErrors === 0 &&
    totals.exactlyOnceViolations === 0 &&
    totals.incomingMismatches === 0 &&
    totals.overBudget === 0 &&
    totals.requestsMissed === 0 &&
    settledSeconds !== null
  );
}

export async function writeReport(file: string, report: ChaosReport): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}
