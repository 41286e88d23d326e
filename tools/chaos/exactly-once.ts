/**
 * The exactly-once rule of stock, from the sandbox's movement records and the lines the checker expects
 * (the stock-tracked lines of the sales started that were signed, the restocked lines of the refunds asked, and the
 * lines of the supplier invoices that came in), never from workflow state. A ledger may merge lines of one item from
 * many sales into one movement, so a movement no longer names its sale; what can be proved from outside is, per
 * business, branch and item:
 *
 * - the recorded DEDUCT quantity equals the quantity of the sold lines;
 * - the recorded ADD quantity equals the quantity of the restocked lines;
 * - no movement `referenceId` is recorded twice (a re-send after proof of non-application reuses its referenceId,
 *   so a second record is a movement applied twice).
 *
 * An item a supplier invoice names is judged by its net instead: a stock-in takes back (DEDUCT) what an invoice
 * leaving `confirmed` added and adds it again on a new confirmation, through the same ledger, so its lines may ride in
 * one movement with a sale's of the same item and action. Only recorded ADD − DEDUCT = restocked − sold + incoming
 * holds for it whatever the ledger merged.
 *
 * Probes (quantity 0: the ledger reading a quantity on hand) move nothing and are counted apart; a probe recorded
 * twice moves nothing either, so it is no violation.
 */
import type { StockMovement } from '../../sandbox/compliance/model.js';

/** One line the world must carry in a recorded movement. */
export interface ExpectedStockLine {
  businessId: string;
  branchId: string;
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
}

/**
 * A line of a supplier invoice at the item it names. Quantity 0: the invoice adds nothing in the end (not confirmed
 * at last), yet the stock-in may have moved it meanwhile, so the item is judged by its net.
 */
export interface IncomingStockLine {
  businessId: string;
  branchId: string;
  itemId: string;
  quantity: number;
}

/** One business, branch and item: what its lines ask for against what the service recorded. */
export interface ItemBalance {
  businessId: string;
  branchId: string;
  itemId: string;
  soldLines: number;
  /** Quantity of the sold lines, and of the recorded DEDUCT movements. */
  sold: number;
  deducted: number;
  deductMovements: number;
  restockedLines: number;
  /** Quantity of the restocked lines, and of the recorded ADD movements (probes excluded). */
  restocked: number;
  added: number;
  addMovements: number;
  /** Judged by its net (a supplier invoice names it): the separate DEDUCT and ADD equalities do not apply. */
  net: boolean;
  /** Lines of invoices that count (quantity above 0), and their quantity. */
  incomingLines: number;
  incoming: number;
  probes: number;
  /** Expected but not recorded, and recorded but not expected: per action, or (`net` items) of the net. */
  missing: { deduct: number; add: number; net: number };
  extra: { deduct: number; add: number; net: number };
}

export interface DuplicateReference {
  businessId: string;
  referenceId: string;
  /** How many times the service recorded it (2 or more). */
  recorded: number;
}

export interface ExactlyOnceVerdict {
  /** Lines of sales and refunds expected to be carried (sold and restocked), and their quantity; incoming apart. */
  lines: number;
  quantity: number;
  /** Movements recorded that move stock (probes excluded). */
  movements: number;
  probes: number;
  /** Movements recorded without a referenceId: they cannot be told apart, so a second one would pass unseen. */
  withoutReference: number;
  duplicates: DuplicateReference[];
  /** Every business, branch and item with a line or a movement. */
  items: ItemBalance[];
  /** Totals of `missing` and `extra` over the items and actions. */
  missingQuantity: number;
  extraQuantity: number;
  /**
   * Each extra record of a referenceId, each (item, action) whose recorded quantity differs from its lines' (each
   * item judged by its net whose net differs), and each movement without a referenceId.
   */
  violations: number;
  ok: boolean;
}

/** A probe: the ledger's read of a quantity on hand (ADD of 0, C28); it moves nothing. */
export function isProbe(movement: Pick<StockMovement, 'quantity'>): boolean {
  return movement.quantity === 0;
}

const itemKey = (businessId: string, branchId: string, itemId: string) => `${businessId}|${branchId}|${itemId}`;

function emptyBalance(businessId: string, branchId: string, itemId: string): ItemBalance {
  return {
    businessId,
    branchId,
    itemId,
    soldLines: 0,
    sold: 0,
    deducted: 0,
    deductMovements: 0,
    restockedLines: 0,
    restocked: 0,
    added: 0,
    addMovements: 0,
    net: false,
    incomingLines: 0,
    incoming: 0,
    probes: 0,
    missing: { deduct: 0, add: 0, net: 0 },
    extra: { deduct: 0, add: 0, net: 0 },
  };
}

/** Recorded ADD − DEDUCT less what the sales, refunds and incoming invoices ask: 0 when the net is right. */
export function netDifference(balance: ItemBalance): number {
  const recorded = balance.added - balance.deducted;
  const expected = balance.restocked - balance.sold + balance.incoming;
  return recorded - expected;
}

/**
 * What of a balance is off: each action whose recorded quantity differs from its lines', or for an item judged by
 * its net, 1 when the net differs.
 */
export function balancesOff(balance: ItemBalance): number {
  if (balance.net) return netDifference(balance) === 0 ? 0 : 1;
  return (balance.sold !== balance.deducted ? 1 : 0) + (balance.restocked !== balance.added ? 1 : 0);
}

export function exactlyOnce(
  expected: readonly ExpectedStockLine[],
  movements: readonly StockMovement[],
  incoming: readonly IncomingStockLine[] = [],
): ExactlyOnceVerdict {
  const balances = new Map<string, ItemBalance>();
  const balanceOf = (businessId: string, branchId: string, itemId: string) => {
    const key = itemKey(businessId, branchId, itemId);
    let balance = balances.get(key);
    if (!balance) balances.set(key, (balance = emptyBalance(businessId, branchId, itemId)));
    return balance;
  };

  for (const line of expected) {
    const balance = balanceOf(line.businessId, line.branchId, line.itemId);
    if (line.action === 'DEDUCT') {
      balance.soldLines++;
      balance.sold += line.quantity;
    } else {
      balance.restockedLines++;
      balance.restocked += line.quantity;
    }
  }

  for (const line of incoming) {
    const balance = balanceOf(line.businessId, line.branchId, line.itemId);
    balance.net = true;
    if (line.quantity <= 0) continue;
    balance.incomingLines++;
    balance.incoming += line.quantity;
  }

  const references = new Map<string, DuplicateReference>();
  let probes = 0;
  let withoutReference = 0;
  let moving = 0;
  for (const m of movements) {
    const balance = balanceOf(m.businessId, m.branchId, m.itemId);
    if (isProbe(m)) {
      balance.probes++;
      probes++;
      continue;
    }
    moving++;
    if (m.action === 'DEDUCT') {
      balance.deducted += m.quantity;
      balance.deductMovements++;
    } else {
      balance.added += m.quantity;
      balance.addMovements++;
    }
    if (m.referenceId === null) {
      withoutReference++;
      continue;
    }
    const key = `${m.businessId}|${m.referenceId}`;
    const seen = references.get(key);
    if (seen) seen.recorded++;
    else references.set(key, { businessId: m.businessId, referenceId: m.referenceId, recorded: 1 });
  }

  const items = [...balances.values()].sort((a, b) =>
    itemKey(a.businessId, a.branchId, a.itemId).localeCompare(itemKey(b.businessId, b.branchId, b.itemId)),
  );
  for (const b of items) {
    if (b.net) {
      const off = netDifference(b);
      b.missing = { deduct: 0, add: 0, net: Math.max(0, -off) };
      b.extra = { deduct: 0, add: 0, net: Math.max(0, off) };
      continue;
    }
    b.missing = { deduct: Math.max(0, b.sold - b.deducted), add: Math.max(0, b.restocked - b.added), net: 0 };
    b.extra = { deduct: Math.max(0, b.deducted - b.sold), add: Math.max(0, b.added - b.restocked), net: 0 };
  }
  const duplicates = [...references.values()].filter((r) => r.recorded > 1);
  const violations =
    duplicates.reduce((n, d) => n + d.recorded - 1, 0) +
    items.reduce((n, b) => n + balancesOff(b), 0) +
    withoutReference;
  return {
    lines: expected.length,
    quantity: expected.reduce((n, l) => n + l.quantity, 0),
    movements: moving,
    probes,
    withoutReference,
    duplicates,
    items,
    missingQuantity: items.reduce((n, b) => n + b.missing.deduct + b.missing.add + b.missing.net, 0),
    extraQuantity: items.reduce((n, b) => n + b.extra.deduct + b.extra.add + b.extra.net, 0),
    violations,
    ok: violations === 0,
  };
}
