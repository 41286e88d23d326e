// Each business's items as this process knows them. Registration only moves forward (C1, C23), so a `REGISTERED`
// item is cached until a list shows otherwise; others come from a list younger than `MIN_REFRESH_INTERVAL_MS`.
import { isRegistered, type Item } from '../src/compliance/schemas.js';
import type { ServiceAccess } from '../src/services/access.js';

const MIN_REFRESH_INTERVAL_MS = 2_000;

interface ItemList {
  at: number;
  items: Map<string, ItemCheck>;
}

interface BusinessItems {
  registered: Map<string, ItemCheck>;
  latest?: ItemList;
  refreshing?: Promise<ItemList>;
}

export type ItemCheck = ReturnType<typeof toCheck>;

function toCheck(item: Item) {
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
  private readonly now: () => number;

  constructor(
    private readonly services: ServiceAccess,
    options: { now?: () => number } = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** `fresh`: the service's list now, whatever is cached (after a rejection the list decides, even back to PENDING). */
  async lookup(businessId: string, requestedIds: readonly string[], options: { fresh?: boolean } = {}) {
    const itemIds = [...new Set(requestedIds)];
    const business = this.business(businessId);
    if (options.fresh) return this.answer(business, itemIds, await this.refresh(businessId, business));
    if (itemIds.every((id) => business.registered.has(id))) return this.answer(business, itemIds, undefined);
    const latest = business.latest;
    if (latest && this.now() - latest.at < MIN_REFRESH_INTERVAL_MS && itemIds.every((id) => latest.items.has(id))) {
      return this.answer(business, itemIds, latest);
    }
    if (business.refreshing) return this.answer(business, itemIds, await business.refreshing);
    return this.answer(business, itemIds, await this.refresh(businessId, business));
  }

  remember(businessId: string, item: Item): void {
    const check = toCheck(item);
    const business = this.business(businessId);
    if (check.registered) business.registered.set(check.itemId, check);
    business.latest?.items.set(check.itemId, check);
  }

  private business(businessId: string): BusinessItems {
    const known = this.businesses.get(businessId);
    if (known) return known;
    const business: BusinessItems = { registered: new Map() };
    this.businesses.set(businessId, business);
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

  /** `items`: one check per known requested item, in the order asked, without repeats. */
  private answer(business: BusinessItems, itemIds: readonly string[], list: ItemList | undefined) {
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
