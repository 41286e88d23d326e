/** Signal-with-start of a branch's stock ledger: every sale of a branch, however it names it, reaches the one. */
import {
  DEFAULT_STOCK_REPORTING,
  STOCK_LEDGER_WORKFLOW_TYPE,
  handOverStockSignal,
  stockLedgerWorkflowId,
  type StockLedgerInput,
  type StockLine,
  type StockReporting,
} from '../src/contracts/stock-ledger.js';
import { WORKFLOW_TASK_QUEUE } from '../src/contracts/task-queues.js';
import type { CanonicalBranch } from './branches.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';

export interface HandOverStockInput {
  businessId: string;
  /** As the sale names it: a branch id or `authorityBhfId`; absent: the business's first branch. */
  branchId?: string;
  lines: StockLine[];
  /** The sale's own task queue: its ledger runs beside it. */
  taskQueue?: string;
}

export function createStockLedgerActivities(
  deps: Pick<ActivityDeps, 'temporal' | 'logger' | 'stockReporting'> & { canonicalBranch: CanonicalBranch },
) {
  return {
    async handOverStock(input: HandOverStockInput): Promise<{ ledgerWorkflowId: string; reporting: StockReporting }> {
      const client = temporalClientOf(deps, 'handOverStock');
      const reporting = deps.stockReporting?.(input.businessId) ?? DEFAULT_STOCK_REPORTING;
      const taskQueue = input.taskQueue ?? WORKFLOW_TASK_QUEUE;
      const branchId = await deps.canonicalBranch(input.businessId, input.branchId);
      const workflowId = stockLedgerWorkflowId(taskQueue, input.businessId, branchId);
      const handle = await client.workflow.signalWithStart(STOCK_LEDGER_WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        args: [{ businessId: input.businessId, branchId } satisfies StockLedgerInput],
        signal: handOverStockSignal,
        signalArgs: [{ lines: input.lines, reporting }],
      });
      deps.logger.debug(
        { workflowId, runId: handle.signaledRunId, lines: input.lines.length },
        'stock lines handed over',
      );
      return { ledgerWorkflowId: workflowId, reporting };
    },
  };
}
