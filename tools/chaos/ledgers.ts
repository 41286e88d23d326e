/**
 * The stock ledgers of a chaos run, as an operator and the settle step see them: the running
 * `stockLedgerWorkflow` executions (a visibility query) and each one's `getState`. Workflow state is for operating
 * the system and for knowing when it has gone quiet; the checker never reads it.
 */
import type { Client } from '@temporalio/client';
import { NeedsAttention } from '../../src/contracts/search-attributes.js';
import {
  STOCK_LEDGER_WORKFLOW_TYPE,
  getStockLedgerStateQuery,
  type LedgerTotals,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';

export interface LedgerSeen {
  workflowId: string;
  /** The ledger's NeedsAttention search attribute as the visibility store shows it (what a person's list shows). */
  needsAttention: boolean;
  state: StockLedgerState;
}

/** What the ledgers still have to do: lines not yet in a movement, movements not settled. */
export interface LedgerBacklog {
  ledgers: number;
  pendingLines: number;
  /** Movements not settled (sending, uncertain, needs_operator), and of them those waiting for an operator. */
  openMovements: number;
  needsOperator: number;
  /** The ledgers' own counts added up (lines taken, settled by evidence, re-sent, operator decisions, probes): reported, never checked. */
  totals: LedgerTotals;
}

export const RUNNING_LEDGERS_QUERY = `WorkflowType = '${STOCK_LEDGER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;

/** Every running ledger and its state; throws when the server or a query cannot answer (the caller tries again). */
export async function readLedgers(client: Client): Promise<LedgerSeen[]> {
  const seen: LedgerSeen[] = [];
  for await (const execution of client.workflow.list({ query: RUNNING_LEDGERS_QUERY })) {
    const state = await client.workflow.getHandle(execution.workflowId).query(getStockLedgerStateQuery);
    seen.push({
      workflowId: execution.workflowId,
      needsAttention: execution.typedSearchAttributes.get(NeedsAttention) === true,
      state,
    });
  }
  return seen;
}

export function backlogOf(states: readonly StockLedgerState[]): LedgerBacklog {
  return {
    ledgers: states.length,
    pendingLines: states.reduce((n, s) => n + Object.values(s.pending).reduce((a, b) => a + b, 0), 0),
    openMovements: states.reduce((n, s) => n + s.open.length, 0),
    needsOperator: states.reduce((n, s) => n + s.open.filter((m) => m.status === 'needs_operator').length, 0),
    totals: sumTotals(states.map((s) => s.totals)),
  };
}

export function sumTotals(totals: readonly LedgerTotals[]): LedgerTotals {
  const sum: LedgerTotals = {
    linesTaken: 0,
    movementsRecorded: 0,
    linesRecorded: 0,
    settledByEvidence: 0,
    resentAfterEvidence: 0,
    operatorDecisions: 0,
    probes: 0,
  };
  for (const t of totals) for (const key of Object.keys(sum) as Array<keyof LedgerTotals>) sum[key] += t[key];
  return sum;
}

/** Nothing left to send or settle: what the settle step waits for before judging the world. */
export function isQuiet(backlog: LedgerBacklog): boolean {
  return backlog.pendingLines === 0 && backlog.openMovements === 0;
}
