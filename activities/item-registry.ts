/**
 * What this worker process knows about the items of each business, so that checking a sale's items costs at
 * most one `GET /v1/items` per business per refresh instead of one per sale.
 *
 * - Registration only moves forward (C1, C23), so an item seen `REGISTERED` is cached until a list shows it
 *   otherwise (a service reset, or one that is not our sandbox); a `fresh` lookup always reads the list.
 * - Other items are answered from the latest list while it is younger than `minRefreshIntervalMs`
 *   (a fresh list that lacks an asked-for item is fetched again: the item may have been created since).
 * - Concurrent callers share one in-flight list call.
 */
import type { Item } from '../src/compliance/index.js';
import type { ServiceAccess } from '../src/services/access.js';
import { isRegistered } from '../src/compliance/index.js';
import type { ItemCheck } from './types.js';

export interface ItemRegistryOptions {
  /** A list younger than this is reused rather than fetched again (default 2000 ms). */
  minRefreshIntervalMs?: number;
  now?: () => number;
}

export interface ItemLookup {
  /** One check per known requested item, in the order asked, without repeats. */
  items: ItemCheck[];
  /** Requested ids the business does not have (or no longer has). */
  unknownItemIds: string[];
}

interface ItemList {
  at: number;
  items: Map<string, ItemCheck>;
}

interface BusinessItems {
  registered: Map<string, ItemCheck>;
  latest?: ItemList;
  refreshing?: Promise<ItemList>;
}

const DEFAULT_MIN_REFRESH_INTERVAL_MS = 2_000;

function toCheck(item: Item): ItemCheck {
  return {
    itemId: item.id,
    registered: isRegistered(item),
    // The service not saying is read as "tracked": reporting is the compliant default, and the service
    // answers 422 item_not_stock_tracked if it disagrees.
    stockTracked: item.stockTracked ?? true,
    unitPrice: item.unitPrice,
  };
}

export class ItemRegistry {
  private readonly businesses = new Map<string, BusinessItems>();
  private readonly minRefreshIntervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly services: ServiceAccess,
    options: ItemRegistryOptions = {},
  ) {
    const interval = options.minRefreshIntervalMs ?? DEFAULT_MIN_REFRESH_INTERVAL_MS;
    if (!Number.isFinite(interval) || interval < 0) {
      throw new RangeError(`ItemRegistry: minRefreshIntervalMs must be a number of ms, 0 or more (got ${interval})`);
    }
    this.minRefreshIntervalMs = interval;
    this.now = options.now ?? Date.now;
  }

  /**
   * Registration status and stock tracking of `itemIds` for one business. Errors of the list call propagate.
   * `fresh`: the service's list as it is now, whatever is cached (after the service rejected a sale, its list
   * decides; a service whose items went back to PENDING, a reset sandbox say, is believed).
   */
  async lookup(
    businessId: string,
    requestedIds: readonly string[],
    options: { fresh?: boolean } = {},
  ): Promise<ItemLookup> {
    const itemIds = [...new Set(requestedIds)];
    const business = this.business(businessId);
    if (options.fresh) return this.answer(business, itemIds, await this.refresh(businessId, business));
    if (itemIds.every((id) => business.registered.has(id))) {
      return this.answer(business, itemIds, undefined);
    }
    const latest = business.latest;
    if (latest && this.now() - latest.at < this.minRefreshIntervalMs && itemIds.every((id) => latest.items.has(id))) {
      return this.answer(business, itemIds, latest);
    }
    if (business.refreshing) return this.answer(business, itemIds, await business.refreshing);
    return this.answer(business, itemIds, await this.refresh(businessId, business));
  }

  /** Records an item the service just answered with (e.g. after registering it). */
  remember(businessId: string, item: Item): void {
    const check = toCheck(item);
    const business = this.business(businessId);
    if (check.registered) business.registered.set(check.itemId, check);
    business.latest?.items.set(check.itemId, check);
  }

  /** Forgets everything (tests, or an operator who re-registered items by hand). */
  clear(): void {
    this.businesses.clear();
  }

  private business(businessId: string): BusinessItems {
    let business = this.businesses.get(businessId);
    if (!business) {
      business = { registered: new Map() };
      this.businesses.set(businessId, business);
    }
    return business;
  }

  private refresh(businessId: string, business: BusinessItems): Promise<ItemList> {
    const refreshing = (async () => {
      const { data } = await this.services.compliance(businessId).listItems({ businessId });
      const list: ItemList = { at: this.now(), items: new Map(data.map((item) => [item.id, toCheck(item)])) };
      // The list is the service's word: an item it no longer shows registered is not kept as registered.
      for (const check of list.items.values()) {
        if (check.registered) business.registered.set(check.itemId, check);
        else business.registered.delete(check.itemId);
      }
      business.latest = list;
      return list;
    })();
    business.refreshing = refreshing;
    const done = () => {
      if (business.refreshing === refreshing) business.refreshing = undefined;
    };
    refreshing.then(done, done);
    return refreshing;
  }

  private answer(business: BusinessItems, itemIds: readonly string[], list: ItemList | undefined): ItemLookup {
    const items: ItemCheck[] = [];
    const unknownItemIds: string[] = [];
    for (const id of itemIds) {
      const check = business.registered.get(id) ?? list?.items.get(id);
      if (check) items.push({ ...check });
      else unknownItemIds.push(id);
    }
    return { items, unknownItemIds };
  }
}
