/**
 * The operator of a chaos run, doing what the runbook asks of a person: the service does not de-duplicate stock
 * movements, so one whose answer was lost waits for someone to look in the dashboard (here the sandbox's) and
 * confirm it or have it sent again; a parked sale is retried. The operator finds that work as a person would, in
 * the sales needing attention (the NeedsAttention search attribute and each sale's state). This is the system
 * under test being operated, not the checker: the checker never reads workflow state.
 */
import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SalesClient } from '../../src/client/sales-client.js';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import type { OperationHistory, OperationKind } from './history.js';
import type { PlannedSale } from './sales.js';

const ROUND_EVERY_MS = 5_000;

export interface Operator {
  /** Rounds that could not finish (e.g. the server was restarting); the next round tries again. */
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
  const act = async (kind: OperationKind, sale: PlannedSale, why: string, call: () => Promise<unknown>, referenceId?: string) => {
    const { businessId, traderInvoiceNumber } = sale.input;
    const op = history.begin({ kind, sale: sale.index, workflowId: saleWorkflowId(businessId, traderInvoiceNumber), businessId, traderInvoiceNumber, ...(referenceId ? { referenceId } : {}) });
    op.attempts = 1;
    try {
      await call();
      history.end(op, 'ok', why);
    } catch (err) {
      history.end(op, 'failed', err instanceof Error ? err.message.slice(0, 300) : String(err));
    }
  };

  const round = async () => {
    for await (const execution of client.workflow.list({ query: 'NeedsAttention = true AND ExecutionStatus = "Running"' })) {
      const sale = planned.get(execution.workflowId);
      if (!sale || stopped) continue;
      const { businessId, traderInvoiceNumber } = sale.input;
      const state = await sales.getState(businessId, traderInvoiceNumber);
      for (const m of state.stockMovements.filter((x) => x.status === 'needs_confirmation')) {
        // The dashboard says whether the movement reached the service.
        const recorded = (await inspector.stockMovements({ businessId, referenceId: m.referenceId })).length > 0;
        const why = `${m.action} ${m.itemId}: ${m.problem ?? 'needs confirmation'}; ${recorded ? 'recorded' : 'not recorded'} in the dashboard`;
        if (recorded) await act('confirmStockMovement', sale, why, () => sales.confirmStockMovement(businessId, traderInvoiceNumber, m.referenceId), m.referenceId);
        else await act('resendStockMovement', sale, why, () => sales.resendStockMovement(businessId, traderInvoiceNumber, m.referenceId), m.referenceId);
      }
      const parked = state.parked;
      if (parked?.actions.includes('retry')) await act('retry', sale, `parked at ${state.step}: ${parked.code}: ${parked.message}`, () => sales.retry(businessId, traderInvoiceNumber));
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await sleep(ROUND_EVERY_MS);
      if (stopped) break;
      try {
        await round();
      } catch {
        failed++;
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
