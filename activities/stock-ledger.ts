/** Signal-with-start of a branch's stock ledger: every sale of a branch, however it names it, reaches the one. */
import {
  DEFAULT_STOCK_REPORTING,
  STOCK_LEDGER_WORKFLOW_TYPE,
  handOverStockSignal,
  stockLedgerWorkflowId,
  type StockHandOver,
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

/**
 * Lines gathered into one signal at most: a busy branch's signal stays small, and a hand-over larger than this (a
 * supplier invoice's) goes alone, as it came.
 */
export const LINES_PER_HAND_OVER = 200;

export function createStockLedgerActivities(
  deps: Pick<ActivityDeps, 'temporal' | 'logger' | 'stockReporting'> & { canonicalBranch: CanonicalBranch },
) {
  const send = async (ledger: LedgerAddress, handOver: StockHandOver) => {
    const handle = await temporalClientOf(deps, 'handOverStock').workflow.signalWithStart(STOCK_LEDGER_WORKFLOW_TYPE, {
      workflowId: ledger.workflowId,
      taskQueue: ledger.taskQueue,
      args: [ledger.start],
      signal: handOverStockSignal,
      signalArgs: [handOver],
    });
    deps.logger.debug(
      { workflowId: ledger.workflowId, runId: handle.signaledRunId, lines: handOver.lines.length },
      'stock lines handed over',
    );
  };
  const handOver = handOversInTurn(send);
  return {
    async handOverStock(input: HandOverStockInput): Promise<{ ledgerWorkflowId: string; reporting: StockReporting }> {
      const reporting = deps.stockReporting?.(input.businessId) ?? DEFAULT_STOCK_REPORTING;
      const taskQueue = input.taskQueue ?? WORKFLOW_TASK_QUEUE;
      const branchId = await deps.canonicalBranch(input.businessId, input.branchId);
      const workflowId = stockLedgerWorkflowId(taskQueue, input.businessId, branchId);
      const start: StockLedgerInput = { businessId: input.businessId, branchId };
      await handOver({ workflowId, taskQueue, start }, { lines: input.lines, reporting });
      return { ledgerWorkflowId: workflowId, reporting };
    },
  };
}

interface LedgerAddress {
  workflowId: string;
  taskQueue: string;
  start: StockLedgerInput;
}

interface Turn {
  ledger: LedgerAddress;
  handOver: StockHandOver;
  sent: PromiseWithResolvers<void>;
}

/**
 * One signal on its way to a ledger at a time: what is handed over meanwhile waits for it and then goes as one signal
 * (the ledger takes a line once, whoever sent it with what). A hand-over that finds its ledger idle goes at once, so
 * a quiet till waits for nothing; a busy branch's sales cost its ledger one signal and one workflow task for many.
 * Each caller learns whether its own lines' signal was taken: a failure is every one of its callers' to handle.
 */
function handOversInTurn(send: (ledger: LedgerAddress, handOver: StockHandOver) => Promise<void>) {
  const waiting = new Map<string, Turn[]>();

  async function drain(workflowId: string, turns: Turn[]): Promise<void> {
    // The turn on its way stays first in the list until it is answered, so that nothing joins it.
    for (let turn = turns[0]; turn !== undefined; turns.shift(), turn = turns[0]) {
      try {
        await send(turn.ledger, turn.handOver);
        turn.sent.resolve();
      } catch (err) {
        turn.sent.reject(err);
      }
    }
    waiting.delete(workflowId);
  }

  return function handOver(ledger: LedgerAddress, { lines, reporting }: StockHandOver): Promise<void> {
    const turns = waiting.get(ledger.workflowId);
    const last = turns?.at(-1);
    // The first turn is already on its way: only a later one takes more lines.
    if (turns && last && turns.length > 1 && last.handOver.lines.length + lines.length <= LINES_PER_HAND_OVER) {
      last.handOver.lines.push(...lines);
      last.handOver.reporting = reporting;
      return last.sent.promise;
    }
    const turn: Turn = { ledger, handOver: { lines: [...lines], reporting }, sent: Promise.withResolvers<void>() };
    if (turns) {
      turns.push(turn);
      return turn.sent.promise;
    }
    const started = [turn];
    waiting.set(ledger.workflowId, started);
    void drain(ledger.workflowId, started);
    return turn.sent.promise;
  };
}
