/** The sync's bookkeeping over plain data; docs/purchases-sync.md says why a ledger and not a date watermark. */
import { z } from 'zod';
import {
  purchaseEventId,
  type LedgerEntry,
  type ListedPurchase,
  type PurchaseEvent,
  type PurchaseLedger,
} from '../../src/contracts/purchases-sync.js';

/** An event to deliver and the ledger entry that records it once delivered. */
export type DueEvent = { event: PurchaseEvent; entry: LedgerEntry };

const ledgerEntry = z.tuple([z.string(), z.number().int().min(0), z.string()]);

/** The previous sync's ledger from the result the schedule hands over; empty (all delivered as received) if none. */
export function previousLedger(lastResult: unknown, businessId: string): PurchaseLedger {
  if (typeof lastResult !== 'object' || lastResult === null) return {};
  const { businessId: owner, ledger } = lastResult as { businessId?: unknown; ledger?: unknown };
  if (owner !== businessId || typeof ledger !== 'object' || ledger === null) return {};
  const valid: PurchaseLedger = {};
  for (const [id, entry] of Object.entries(ledger)) {
    const parsed = ledgerEntry.safeParse(entry);
    if (parsed.success) valid[id] = parsed.data;
  }
  return valid;
}

/**
 * Moves each listed invoice's entry from `previous` to `ledger`, so `ledger` ends holding exactly what the service
 * lists; an invoice whose event is due keeps its old entry until `recordDelivered` moves it forward.
 */
export function diffPage(
  businessId: string,
  listed: readonly ListedPurchase[],
  previous: PurchaseLedger,
  ledger: PurchaseLedger,
) {
  const diff = { due: [] as DueEvent[], seen: listed.length, newInvoices: 0, statusChanges: 0 };
  for (const { purchase, fingerprint } of listed) {
    const known = ledger[purchase.id] ?? previous[purchase.id];
    delete previous[purchase.id];
    if (known !== undefined) ledger[purchase.id] = known;
    if (known !== undefined && known[0] === fingerprint) continue;
    const version = known === undefined ? 0 : known[1] + 1;
    const event: PurchaseEvent = {
      id: purchaseEventId(purchase.id, version, fingerprint),
      type: known === undefined ? 'purchase.received' : 'purchase.status_changed',
      businessId,
      purchase,
      ...(known === undefined ? {} : { previousStatus: known[2] }),
    };
    if (known === undefined) diff.newInvoices++;
    else diff.statusChanges++;
    diff.due.push({ event, entry: [fingerprint, version, purchase.status] });
  }
  return diff;
}

/** Records the first `count` due events as delivered. */
export function recordDelivered(ledger: PurchaseLedger, due: readonly DueEvent[], count: number): void {
  for (const { event, entry } of due.slice(0, count)) ledger[event.purchase.id] = entry;
}
