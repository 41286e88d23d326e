/** What a chaos run writes (bench/chaos.json) and the one line it ends with. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FaultRuleInput } from '../../sandbox/shared/faults.js';
import type { RequestsSummary } from '../../sandbox/inspector.js';
import type { Totals, Verdicts } from './checker.js';
import type { Storm } from './fault-plan.js';
import type { Operation } from './history.js';
import type { WorkerEvent } from './workers.js';

export interface ChaosParameters {
  sales: number;
  faultSeconds: number;
  settleTimeoutSeconds: number;
  requestsPerMinute: number;
  workers: number;
  workerKillEverySeconds: number;
}

export interface ChaosReport {
  seed: number;
  parameters: ChaosParameters;
  startedAt: string;
  commit: string | null;
  /** Times in ms since the faults started (`faultsStartedAt`, to compare with the sandbox's timestamps). */
  timeline: {
    faultsStartedAt: string;
    faultsStoppedAtMs: number;
    serverRestart: { atMs: number; downMs: number } | null;
    storms: Array<Pick<Storm, 'atMs' | 'durationMs'>>;
    settledAtMs: number | null;
    endedAtMs: number;
  };
  /** How much of the run met the faults: sale documents first filed while they were on. */
  exposure: { salesFiledDuringFaults: number; salesFiledAfter: number };
  faultRules: FaultRuleInput[];
  /** Counted by the sandbox's fault engine: what was actually injected. */
  faultsInjected: Record<string, number>;
  requests: Omit<RequestsSummary, 'faultsInjected'>;
  workerEvents: WorkerEvent[];
  workerKills: number;
  operator: { actions: Record<string, number>; failedRounds: number };
  operations: Operation[];
  verdicts: Verdicts;
  settled: boolean;
  /** Seconds from faults stopping to every expectation holding. */
  settledSeconds: number | null;
  result: string;
}

export function resultLine(totals: Totals, settledSeconds: number | null, settleTimeoutSeconds: number): string {
  const settled = settledSeconds === null ? `not settled within ${settleTimeoutSeconds} s` : `settled in ${settledSeconds.toFixed(1)} s`;
  return `chaos: ${totals.sales} sales, ${totals.duplicates} duplicate documents, ${totals.lost} lost, ${totals.stockErrors} stock errors, ${totals.creditNoteErrors} credit-note errors, ${settled}`;
}

/** Exit 0 only when nothing is wrong and everything settled in time. */
export function passed(totals: Totals, settledSeconds: number | null): boolean {
  return totals.duplicates === 0 && totals.lost === 0 && totals.stockErrors === 0 && totals.creditNoteErrors === 0 && settledSeconds !== null;
}

export async function writeReport(file: string, report: ChaosReport): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}
