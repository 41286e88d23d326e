/** The stock-in's activities: the sync tells it what it saw, and the business's item names answer its lines. */
import { BusinessId } from '../src/contracts/search-attributes.js';
import { STOCK_PACE } from '../src/contracts/stock-ledger.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  purchasesSeenSignal,
  stockInWorkflowId,
  type SeenPurchase,
  type StockInInput,
  type StockInSettings,
} from '../src/contracts/stock-in.js';
import { answerNames, type CatalogueItem, type NameAnswers } from '../src/contracts/item-names.js';
import { callApi, whileAlive } from './api-call.js';
import { waitForRoom } from './backlog.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';

/** Item names read for matching are used this long: an item created meanwhile is matched on the next read. */
const CATALOGUE_FRESH_MS = 10 * 60_000;
const CATALOGUES_KEPT = 1_000;

export interface MatchItemNamesInput {
  businessId: string;
  /** Supplier line descriptions no mapping matches. */
  descriptions?: string[];
  /** Items a mapping names: each must be one the business tracks. */
  itemIds?: string[];
  fresh?: boolean;
}

export interface MatchItemNamesResult {
  names: NameAnswers;
  unknownItemIds: string[];
}

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
  const catalogues = new Map<string, { items: CatalogueItem[]; readAt: number }>();
  return {
    /**
     * Signal-with-start: the stock-in starts with the first invoice it is told; a business without settings, none. Told
     * only once the stock-in has passed on what it was told before (STOCK_PACE): `busy` after a wait of `waitMs`, and
     * the sync asks again.
     */
    async tellStockIn({ businessId, purchases, taskQueue }: TellStockInInput): Promise<{ told: boolean; busy?: true }> {
      const settings = deps.stockIn?.(businessId);
      if (settings === undefined) return { told: false };
      const client = temporalClientOf(deps, 'tellStockIn');
      const workflowId = stockInWorkflowId(taskQueue, businessId);
      const room = await whileAlive(() =>
        waitForRoom(client, { workflowId, atMost: STOCK_PACE.stockInLines, waitMs: STOCK_PACE.waitMs }),
      );
      if (!room.room) return { told: false, busy: true };
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

    /**
     * What the business's stock-tracked items say of some line descriptions, and which of `itemIds` it does not track:
     * the workflow is handed answers the size of its question, never the catalogue (`GET /v1/items` is not paginated).
     * The list is read at most once per 10 minutes per business and process; `fresh` reads it again.
     */
    async matchItemNames({
      businessId,
      descriptions = [],
      itemIds = [],
      fresh = false,
    }: MatchItemNamesInput): Promise<MatchItemNamesResult> {
      const cached = catalogues.get(businessId);
      let items = cached && !fresh && Date.now() - cached.readAt < CATALOGUE_FRESH_MS ? cached.items : undefined;
      if (items === undefined) {
        items = await callApi(deps, true, async (signal) => {
          const { data } = await deps.services.compliance(businessId).listItems({ businessId, signal });
          return data.filter((item) => item.stockTracked !== false).map((item) => ({ id: item.id, name: item.name }));
        });
        catalogues.delete(businessId);
        catalogues.set(businessId, { items, readAt: Date.now() });
        // The businesses of one process: a few thousand lists at most, the oldest dropped first.
        if (catalogues.size > CATALOGUES_KEPT) catalogues.delete(catalogues.keys().next().value!);
      }
      const known = new Set(items.map((item) => item.id));
      return {
        names: answerNames(items, descriptions),
        unknownItemIds: [...new Set(itemIds)].filter((id) => !known.has(id)),
      };
    },
  };
}
