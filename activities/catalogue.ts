/** A catalogue import's calls: a creation, or a read of the item list to settle a creation whose answer was lost. */
import { Context } from '@temporalio/activity';
import {
  CATALOGUE_DEFAULT_REQUESTS_PER_MINUTE,
  CATALOGUE_ROW_FIELDS,
  type CatalogueRow,
} from '../src/contracts/catalogue-import.js';
import { itemFromError, isRegistered, type Item } from '../src/compliance/schemas.js';
import { ApiError } from '../src/http/errors.js';
import type { RateLimitInfo } from '../src/http/rate-limit.js';
import { callApi, queuedMs, whileAlive } from './api-call.js';
import type { ActivityDeps } from './deps.js';
import { requestRegistration } from './registration.js';

/** The item the service holds for a row's `externalId`, and how it differs from the row. */
export interface CatalogueItemFound {
  itemId: string;
  created: boolean;
  registered: boolean;
  /** The row's fields the item holds otherwise (a conflict): fields the row leaves out are the service's to choose. */
  differs: string[];
  /** How long the creation waited in its queue: the import's pace reads the budget from it. */
  queuedMs?: number;
  /** The item's registration was requested for `waitFor`: the caller hears its outcome as that waiter. */
  registrationRequested?: boolean;
  /** The application's window as the service counted it in its answer: the pace reads the rest of the budget's use. */
  window?: { limit: number; remaining: number; resetSeconds: number };
}

function windowOf({ limit, remaining, resetSeconds }: RateLimitInfo = {}): CatalogueItemFound['window'] {
  return limit === undefined || remaining === undefined || resetSeconds === undefined
    ? undefined
    : { limit, remaining, resetSeconds };
}

interface CatalogueItemInput {
  businessId: string;
  row: CatalogueRow;
  /** Given: an unregistered item as the row has it goes to its registration workflow here, saving the caller a task. */
  waitFor?: { workflowId: string; taskQueue: string };
}

/** A budget of a few requests a minute has slots longer than a creation may take: a registration is held this long. */
const HOLD_AT_MOST_MS = 5_000;

/**
 * How long one request of the business's budget is worth. Temporal's limiter holds a second's worth of them: a
 * registration sent right behind its creation takes the slot a till's sale would find, and the sale waits for the next.
 */
function slotMsOf(deps: ActivityDeps, businessId: string): number {
  let requestsPerMinute: number | undefined;
  try {
    requestsPerMinute = deps.services.place(businessId, { newWork: false }).requestsPerMinute;
  } catch {
    // A placement still awaited: the item is created, and the service's own limit spaces its registration as well.
  }
  return Math.min(HOLD_AT_MOST_MS, 60_000 / (requestsPerMinute ?? CATALOGUE_DEFAULT_REQUESTS_PER_MINUTE));
}

/** The row's fields an item holds too: all but its key and the branch it is registered for. */
type ItemField = Exclude<keyof CatalogueRow, 'externalId' | 'branchId'>;
const COMPARED = CATALOGUE_ROW_FIELDS.filter((f): f is ItemField => f !== 'externalId' && f !== 'branchId');

function found(item: Item, row: CatalogueRow, created: boolean): CatalogueItemFound {
  const differs = COMPARED.filter((field) => row[field] !== undefined && row[field] !== item[field]);
  return { itemId: item.id, created, registered: isRegistered(item), differs };
}

export function createCatalogueActivities(deps: ActivityDeps) {
  const { services } = deps;
  return {
    /** Creates the row's item (C21); a 409, a lost answer and a retry: docs/catalogue.md, step 4. */
    async createCatalogueItem({ businessId, row, waitFor }: CatalogueItemInput): Promise<CatalogueItemFound> {
      let window: CatalogueItemFound['window'];
      const existing = (err: unknown) => {
        if (!(err instanceof ApiError) || err.code !== 'already_exists') return undefined;
        const item = itemFromError(err);
        if (item) window = windowOf(err.rateLimit);
        return item && found(item, row, false);
      };
      const waited = queuedMs();
      const sentAt = Date.now();
      const { branchId: _branch, ...fields } = row;
      const created = await callApi({ ...deps, recover: existing }, false, async (signal) => {
        const { data, meta } = await services.compliance(businessId).createItem(fields, { businessId, signal });
        window = windowOf(meta.rateLimit);
        return found(data, row, true);
      });
      const item = { ...created, ...(window ? { window } : {}) };
      if (!waitFor || item.registered || item.differs.length > 0) return { ...item, queuedMs: waited };
      // A slot after the creation, the limiter has refilled the one the creation took before the registration takes it.
      const holdMs = sentAt + slotMsOf(deps, businessId) - Date.now();
      if (holdMs > 0) await whileAlive(() => Context.current().sleep(holdMs));
      await whileAlive(() =>
        requestRegistration(deps, 'createCatalogueItem', {
          businessId,
          itemId: item.itemId,
          ...(row.branchId === undefined ? {} : { branchId: row.branchId }),
          waiterWorkflowId: waitFor.workflowId,
          taskQueue: waitFor.taskQueue,
        }),
      );
      return { ...item, queuedMs: waited, registrationRequested: true };
    },

    /** The service's item for the row's `externalId` (evidence for a creation whose answer was lost), or null. */
    async findCatalogueItem({ businessId, row }: CatalogueItemInput): Promise<CatalogueItemFound | null> {
      return callApi(deps, true, async (signal) => {
        const { data } = await services.compliance(businessId).listItems({ businessId, signal });
        const item = data.find((candidate) => candidate.externalId === row.externalId);
        return item ? found(item, row, false) : null;
      });
    },
  };
}
