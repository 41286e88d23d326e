/** A catalogue import's calls: a creation, or a read of the item list to settle a creation whose answer was lost. */
import { CATALOGUE_ROW_FIELDS, type CatalogueRow } from '../src/contracts/catalogue-import.js';
import { itemFromError, isRegistered, type Item } from '../src/compliance/schemas.js';
import { ApiError } from '../src/http/errors.js';
import { callApi, queuedMs } from './api-call.js';
import type { ActivityDeps } from './deps.js';

/** The item the service holds for a row's `externalId`, and how it differs from the row. */
export interface CatalogueItemFound {
  itemId: string;
  /** Created by this call; false: the service had it already. */
  created: boolean;
  registered: boolean;
  /** The row's fields the item holds otherwise (a conflict): fields the row leaves out are the service's to choose. */
  differs: string[];
  /** How long the creation waited in its queue: the import's pace reads the budget from it. */
  queuedMs?: number;
}

interface CatalogueItemInput {
  businessId: string;
  row: CatalogueRow;
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
    /**
     * Creates the row's item (C21). A 409 `already_exists` carries the item the service has: compared with the row,
     * not changed. A lost answer fails as `ambiguous_write`: the workflow settles it from the item list.
     */
    async createCatalogueItem({ businessId, row }: CatalogueItemInput): Promise<CatalogueItemFound> {
      const existing = (err: unknown) => {
        const item = err instanceof ApiError && err.code === 'already_exists' ? itemFromError(err) : undefined;
        return item && found(item, row, false);
      };
      const waited = queuedMs();
      const { branchId: _branch, ...fields } = row;
      const item = await callApi({ ...deps, recover: existing }, false, async (signal) => {
        const { data } = await services.compliance(businessId).createItem(fields, { businessId, signal });
        return found(data, row, true);
      });
      return { ...item, queuedMs: waited };
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
