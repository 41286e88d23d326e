/**
 * The stock section's view of a ledger through Temporal: its state (query), waiting for it to settle, acting as its
 * operator from the sandbox's records, and its histories for the profile. The figures themselves never come from
 * here but from the sandbox; the state only says when a run is over and which sales an operator's movement carried.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/server.js';
import {
  getStockLedgerStateQuery,
  settleMovementUpdate,
  stockLedgerWorkflowId,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import type { BenchTemporal } from './env.js';
import { branchOf } from './stock-world.js';
import { mapLimit } from './stats.js';
import { ledgerProfile, toLedgerEvents, type LedgerProfile } from './stock-profile.js';
import type { StockLedgerLeft, StockOperatorDecision } from './stock-report.js';

/** How often a ledger's state is read while waiting for it to settle (and for operator work). */
const LEDGER_POLL_MS = 1_000;

/** A business's ledger at its one branch (the stock world's), beside the sales of the worker on `taskQueue`. */
export interface LedgerOf {
  taskQueue: string;
  businessId: string;
}

const ledgerIdOf = ({ taskQueue, businessId }: LedgerOf) =>
  stockLedgerWorkflowId(taskQueue, businessId, branchOf(businessId));
const ledgerHandle = (t: BenchTemporal, of: LedgerOf) => t.client.workflow.getHandle(ledgerIdOf(of));

export async function ledgerState(t: BenchTemporal, of: LedgerOf): Promise<StockLedgerState | undefined> {
  try {
    return await ledgerHandle(t, of).query(getStockLedgerStateQuery);
  } catch {
    // Not started yet, or its worker being restarted: asked again at the next poll.
    return undefined;
  }
}

const pendingLines = (s: StockLedgerState) => Object.values(s.pending).reduce((sum, n) => sum + n, 0);
const isSettled = (s: StockLedgerState | undefined) => s !== undefined && s.open.length === 0 && pendingLines(s) === 0;

/** What a ledger still held when the run gave up on it. */
export function leftOf(s: StockLedgerState | undefined): StockLedgerLeft {
  if (!s) return { pendingLines: Number.NaN, open: [] };
  return {
    pendingLines: pendingLines(s),
    open: s.open.map((m) => ({
      referenceId: m.referenceId,
      itemId: m.itemId,
      status: m.status,
      lines: m.lines.reduce((n, l) => n + 1 + (l.folded ?? 0), 0),
      ...(m.problem ? { problem: m.problem } : {}),
    })),
  };
}

export interface Settled {
  state: StockLedgerState | undefined;
  settled: boolean;
  /** When it was seen settled, or gave up (epoch ms). */
  at: number;
}

/**
 * Waits until every sale of `saleIds` closed (its lines handed over) and the ledger holds no pending line and no open
 * movement, or `deadline()` (epoch ms, read at each poll) passes; `onState` sees each state read meanwhile (the
 * operator's chance to act).
 */
export async function settle(
  t: BenchTemporal,
  of: LedgerOf,
  saleIds: readonly string[],
  deadline: () => number,
  onState: (s: StockLedgerState) => Promise<void> = async () => undefined,
): Promise<Settled> {
  let salesClosed = false;
  // Not awaited: a sale that never closes is part of what the deadline reports.
  void mapLimit(saleIds, 50, (id) => t.client.workflow.getHandle(id).result()).then(
    () => {
      salesClosed = true;
    },
    () => undefined,
  );
  let state: StockLedgerState | undefined;
  while (Date.now() < deadline()) {
    state = await ledgerState(t, of);
    if (state) await onState(state);
    if (salesClosed && isSettled(state)) return { state, settled: true, at: Date.now() };
    await sleep(LEDGER_POLL_MS);
  }
  return { state, settled: false, at: Date.now() };
}

/**
 * The bench as the operator: a movement waiting for one is settled from the sandbox's records (its referenceId
 * recorded: applied; not: send it again), as a person reading the compliance dashboard would. Each decision is
 * pushed to `decisions`.
 */
export function operatorFor(
  t: BenchTemporal,
  sandbox: Sandbox,
  of: LedgerOf,
  decisions: StockOperatorDecision[],
): (s: StockLedgerState) => Promise<void> {
  const decided = new Set<string>();
  return async (state) => {
    for (const m of state.open.filter((o) => o.status === 'needs_operator' && !decided.has(o.referenceId))) {
      const recorded = await sandbox.inspector.stockMovements({
        businessId: of.businessId,
        referenceId: m.referenceId,
      });
      const decision = recorded.length > 0 ? 'applied' : 'resend';
      try {
        await ledgerHandle(t, of).executeUpdate(settleMovementUpdate, {
          args: [{ referenceId: m.referenceId, decision }],
        });
      } catch {
        // Refused (no longer waiting) or its worker being restarted: the next state read says whether to ask again.
        continue;
      }
      decided.add(m.referenceId);
      decisions.push({
        referenceId: m.referenceId,
        decision,
        problem: m.problem,
        sales: new Set(m.lines.map((l) => l.saleWorkflowId)).size,
      });
    }
  };
}

/** The profile of every run of a ledger (it continues as new as its history grows), from visibility and the histories. */
export async function profileOf(t: BenchTemporal, of: LedgerOf): Promise<LedgerProfile> {
  const workflowId = ledgerIdOf(of);
  const runs: string[] = [];
  for await (const execution of t.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(execution.runId);
  const histories = await mapLimit(runs, 4, async (runId) =>
    toLedgerEvents((await t.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []),
  );
  return ledgerProfile(histories);
}
