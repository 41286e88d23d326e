/**
 * The operator of a chaos run, doing what the runbook asks of a person. The service does not de-duplicate stock
 * movements, so one whose answer was lost and whose outcome nothing else proves waits for someone to look in the
 * dashboard (here the sandbox's):
 *
 * - a stock ledger shows a movement `needs_operator` (its quantity-on-hand evidence was inconclusive, or
 *   the service refused it): `settleMovement` with `applied` when the dashboard has its referenceId, `resend` when not;
 * - a parked sale is retried.
 *
 * The operator finds sales as a person would, in the sales needing attention (the NeedsAttention search attribute
 * and each sale's state), and reads every running ledger's state (a handful per run). This is the system under
 * test being operated, not the checker: the checker never reads workflow state.
 */
import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SalesClient } from '../../src/client/sales-client.js';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { settleMovementUpdate, type LedgerMovementShown } from '../../src/contracts/stock-ledger.js';
import type { OperationHistory, OperationKind } from './history.js';
import { readLedgers, type LedgerSeen } from './ledgers.js';
import type { PlannedSale } from './sales.js';

const ROUND_EVERY_MS = 5_000;

export interface Operator {
  /** Rounds (their sale or ledger part) that could not finish (e.g. the server was restarting); the next round tries again. */
  failedRounds(): number;
  stop(): Promise<void>;
}

export function startOperator(options: {
  client: Client;
  sales: SalesClient;
  inspector: SandboxInspector;
  history: OperationHistory;
  planned: ReadonlyMap<string, PlannedSale>;
}): Operator {
  const { client, sales, inspector, history, planned } = options;
  let stopped = false;
  let failed = 0;

  /** `why`: what the sale showed the operator (the park reason, the movement's problem). */
  const act = async (
    kind: OperationKind,
    sale: PlannedSale,
    why: string,
    call: () => Promise<unknown>,
    referenceId?: string,
  ) => {
    const { businessId, traderInvoiceNumber } = sale.input;
    const op = history.begin({
      kind,
      sale: sale.index,
      workflowId: saleWorkflowId(businessId, traderInvoiceNumber),
      businessId,
      traderInvoiceNumber,
      ...(referenceId ? { referenceId } : {}),
    });
    op.attempts = 1;
    try {
      await call();
      history.end(op, 'ok', why);
    } catch (err) {
      history.end(op, 'failed', err instanceof Error ? err.message.slice(0, 300) : String(err));
    }
  };

  const saleRound = async () => {
    for await (const execution of client.workflow.list({
      query: 'NeedsAttention = true AND ExecutionStatus = "Running"',
    })) {
      const sale = planned.get(execution.workflowId);
      if (!sale || stopped) continue;
      const { businessId, traderInvoiceNumber } = sale.input;
      const state = await sales.getState(businessId, traderInvoiceNumber);
      const parked = state.parked;
      if (parked?.actions.includes('retry'))
        await act('retry', sale, `parked at ${state.step}: ${parked.code}: ${parked.message}`, () =>
          sales.retry(businessId, traderInvoiceNumber),
        );
    }
  };

  /** One movement a ledger cannot settle alone: the dashboard decides applied or resend. */
  const settle = async (ledger: LedgerSeen, m: LedgerMovementShown) => {
    const { businessId } = ledger.state;
    const recorded = (await inspector.stockMovements({ businessId, referenceId: m.referenceId })).length > 0;
    const decision = recorded ? 'applied' : 'resend';
    const why =
      `${m.action} ${m.itemId} x${m.quantity} (${m.lines.reduce((n, l) => n + 1 + (l.folded ?? 0), 0)} line(s)): ${m.problem ?? 'needs an operator'}; ` +
      `${recorded ? 'recorded' : 'not recorded'} in the dashboard${ledger.needsAttention ? '' : '; the ledger did not show NeedsAttention'}`;
    const op = history.begin({
      kind: 'settleMovement',
      sale: null,
      workflowId: ledger.workflowId,
      businessId,
      traderInvoiceNumber: null,
      referenceId: m.referenceId,
      decision,
    });
    op.attempts = 1;
    try {
      await client.workflow
        .getHandle(ledger.workflowId)
        .executeUpdate(settleMovementUpdate, { args: [{ referenceId: m.referenceId, decision }] });
      history.end(op, 'ok', why);
    } catch (err) {
      history.end(op, 'failed', `${why}; ${err instanceof Error ? err.message.slice(0, 300) : String(err)}`);
    }
  };

  const ledgerRound = async () => {
    for (const ledger of await readLedgers(client)) {
      for (const m of ledger.state.open.filter((x) => x.status === 'needs_operator')) {
        if (stopped) return;
        await settle(ledger, m);
      }
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await sleep(ROUND_EVERY_MS);
      // Each part on its own: a sale's state that cannot be read this round must not hold the ledgers up.
      for (const part of [saleRound, ledgerRound]) {
        if (stopped) break;
        try {
          await part();
        } catch {
          failed++;
        }
      }
    }
  })();

  return {
    failedRounds: () => failed,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
