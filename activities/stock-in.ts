/** The stock-in's activities: the sync tells it what it saw, and it reads the business's item names to match lines. */
import { BusinessId } from '../src/contracts/search-attributes.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  purchasesSeenSignal,
  stockInWorkflowId,
  type SeenPurchase,
  type StockInInput,
  type StockInSettings,
} from '../src/contracts/stock-in.js';
import { callApi } from './api-call.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';

export interface TellStockInInput {
  businessId: string;
  purchases: SeenPurchase[];
  /** The sync's own queue: the stock-in and the ledgers it hands lines to run there. */
  taskQueue: string;
}

export interface StockInActivityDeps extends Pick<
  ActivityDeps,
  'services' | 'logger' | 'metrics' | 'outages' | 'temporal'
> {
  /** Each business's stock-in settings (src/config/stock-in.ts); absent or undefined: the business takes none in. */
  stockIn?: (businessId: string) => StockInSettings | undefined;
}

export function createStockInActivities(deps: StockInActivityDeps) {
  return {
    /** Signal-with-start: the stock-in starts with the first invoice it is told; a business without settings, none. */
    async tellStockIn({ businessId, purchases, taskQueue }: TellStockInInput): Promise<{ told: boolean }> {
      const settings = deps.stockIn?.(businessId);
      if (settings === undefined) return { told: false };
      const client = temporalClientOf(deps, 'tellStockIn');
      const workflowId = stockInWorkflowId(taskQueue, businessId);
      await client.workflow.signalWithStart(STOCK_IN_WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        args: [{ businessId } satisfies StockInInput],
        signal: purchasesSeenSignal,
        signalArgs: [{ purchases, settings, taskQueue }],
        typedSearchAttributes: [{ key: BusinessId, value: businessId }],
        staticSummary: `Stock-in of ${businessId}`,
      });
      deps.logger.debug({ workflowId, purchases: purchases.length }, 'supplier invoices told to the stock-in');
      return { told: true };
    },

    /** The business's stock-tracked items, by id and name: what a supplier line's name may match. */
    async listStockItems({
      businessId,
    }: {
      businessId: string;
    }): Promise<{ items: Array<{ id: string; name: string }> }> {
      return callApi(deps, true, async (signal) => {
        const { data } = await deps.services.compliance(businessId).listItems({ businessId, signal });
        return {
          items: data.filter((item) => item.stockTracked !== false).map((item) => ({ id: item.id, name: item.name })),
        };
      });
    },
  };
}
