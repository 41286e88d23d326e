/** The sync's bookkeeping over plain data; docs/purchases-sync.md says why these listings, and why books. */
import { z } from 'zod';
import {
  purchaseEventId,
  type LedgerEntry,
  type ListedPurchase,
  type ListingPass,
  type PurchaseEvent,
  type PurchaseLedger,
  type InReview,
  type PurchasesSyncCarry,
  type SweepState,
} from '../../src/contracts/purchases-sync.js';
import type { BookWrite, BookedPurchase } from '../../src/contracts/purchases-book.js';

/** An event to deliver and the ledger entry that records it once delivered. */
export type DueEvent = { event: PurchaseEvent; entry: LedgerEntry };

const ledgerEntry = z.tuple([z.string(), z.number().int().min(0), z.string()]);
const inReviewSchema = z.record(z.string(), z.array(z.string()));
const sweepState = z.object({
  next: z.string().nullable(),
  completedAt: z.string().nullable(),
  syncedAt: z.string(),
});

/**
 * What the previous sync handed on: where its sweep stands; or, from a result of shape `{ledger, told}`, that ledger
 * and the statuses it told, to move into the books. Nothing usable: this is the business's first sync.
 */
export function previousSync(
  lastResult: unknown,
  businessId: string,
): {
  sweep?: SweepState;
  inReview?: InReview;
  pending?: { ids: InReview; overflow: boolean };
  migrating?: NonNullable<PurchasesSyncCarry['migrating']>;
} {
  if (typeof lastResult !== 'object' || lastResult === null) return {};
  const {
    businessId: owner,
    ledger,
    told,
    sweep,
    inReview,
    pending,
    pendingOverflow,
  } = lastResult as Record<string, unknown>;
  if (owner !== businessId) return {};
  const swept = sweepState.safeParse(sweep);
  const reviewed = inReviewSchema.safeParse(inReview);
  const left = inReviewSchema.safeParse(pending);
  if (swept.success)
    return {
      sweep: swept.data,
      inReview: reviewed.success ? reviewed.data : {},
      pending: { ids: left.success ? left.data : {}, overflow: pendingOverflow === true },
    };
  if (typeof ledger !== 'object' || ledger === null) return {};
  const valid: PurchaseLedger = {};
  for (const [id, entry] of Object.entries(ledger)) {
    const parsed = ledgerEntry.safeParse(entry);
    if (parsed.success) valid[id] = parsed.data;
  }
  const toldBefore =
    typeof told === 'object' && told !== null
      ? Object.fromEntries(
          Object.entries(told).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
        )
      : {};
  return { migrating: { ledger: valid, told: toldBefore } };
}

const DAY_MS = 86_400_000;

/** The shortest sweep period a sync takes (36 s): settings say at least an hour; time-scaled runs go lower. */
export const MIN_SWEEP_HOURS = 0.01;

/** The business's calendar day now: invoice dates are Kenyan dates (UTC+3, no daylight saving). */
export function todayInKenya(nowMs: number): string {
  return new Date(nowMs + 3 * 3_600_000).toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

export interface ListingSettings {
  windowDays: number;
  horizonDays: number;
  sweepHours: number;
}

/**
 * This sync's listings, and the sweep it hands on. Every sync lists the open review statuses (an invoice of any age
 * moved back to review shows there) and the recent window; the sweep lists a slice of the older dates, sized by the
 * time since the last sync so that the whole horizon is listed once per `sweepHours`, whatever the interval. A first
 * sync lists the whole horizon.
 */
export function planListings(
  settings: ListingSettings,
  nowMs: number,
  previous: SweepState | undefined,
  pending: { ids: InReview; overflow: boolean } = { ids: {}, overflow: false },
): { passes: ListingPass[]; sweep: SweepState } {
  const today = todayInKenya(nowMs);
  const oldest = addDays(today, -settings.horizonDays);
  const syncedAt = new Date(nowMs).toISOString();
  const windowStart = addDays(today, -settings.windowDays);
  const sweepStart = addDays(windowStart, -1);
  // A first sync, or one whose predecessor left more events pending than it could remember: the whole horizon.
  if (previous === undefined || pending.overflow)
    return {
      passes: [{ name: 'full', fromDate: oldest }],
      sweep: { next: null, completedAt: syncedAt, syncedAt },
    };
  const passes: ListingPass[] = [
    { name: 'pulled', status: 'pulled', fromDate: oldest },
    { name: 'pending_review', status: 'pending_review', fromDate: oldest },
    { name: 'recent', fromDate: windowStart },
    ...pendingPasses(pending.ids, windowStart),
  ];
  const region = daysBetween(oldest, sweepStart) + 1;
  if (region <= 0) return { passes, sweep: { ...previous, next: null, syncedAt } };
  const periodMs = settings.sweepHours * 3_600_000;
  const sinceMs = Math.max(nowMs - Date.parse(previous.syncedAt), 0);
  const sliceDays = Math.max(1, Math.ceil((region * (Math.min(sinceMs, periodMs) || 15 * 60_000)) / periodMs));
  // No sync for a whole sweep period (workers or Temporal down): this one sweeps the whole horizon.
  const whole = sinceMs >= periodMs;
  // A slice never starts inside the window (the window moved on since) nor before the horizon.
  const to =
    whole || previous.next === null || previous.next > sweepStart || previous.next < oldest
      ? sweepStart
      : previous.next;
  const from = whole || addDays(to, -(sliceDays - 1)) < oldest ? oldest : addDays(to, -(sliceDays - 1));
  passes.push({ name: 'sweep', fromDate: from, toDate: to });
  const done = from === oldest;
  return {
    passes,
    sweep: { next: done ? null : addDays(from, -1), completedAt: done ? syncedAt : previous.completedAt, syncedAt },
  };
}

/** The events due for a page: an invoice no book holds is new, one whose fingerprint differs has changed. */
export function diffPage(
  businessId: string,
  listed: readonly ListedPurchase[],
  known: (id: string) => LedgerEntry | undefined,
) {
  const diff = { due: [] as DueEvent[], seen: listed.length, newInvoices: 0, statusChanges: 0 };
  for (const { purchase, fingerprint } of listed) {
    const entry = known(purchase.id);
    if (entry !== undefined && entry[0] === fingerprint) continue;
    const version = entry === undefined ? 0 : entry[1] + 1;
    const event: PurchaseEvent = {
      id: purchaseEventId(purchase.id, version, fingerprint),
      type: entry === undefined ? 'purchase.received' : 'purchase.status_changed',
      businessId,
      purchase,
      ...(entry === undefined ? {} : { previousStatus: entry[2] }),
    };
    if (entry === undefined) diff.newInvoices++;
    else diff.statusChanges++;
    diff.due.push({ event, entry: [fingerprint, version, purchase.status] });
  }
  return diff;
}

/**
 * What the books must hold after a page: the entry of each event delivered, the status told, and what a ledger carried
 * whole still knew of an invoice the books do not hold yet.
 */
export function bookWrites(
  listed: readonly ListedPurchase[],
  booked: Readonly<Record<string, BookedPurchase>>,
  delivered: readonly DueEvent[],
  told: Readonly<Record<string, string>>,
  migrating: PurchasesSyncCarry['migrating'],
): BookWrite[] {
  const entries = new Map(delivered.map(({ event, entry }) => [event.purchase.id, entry]));
  const writes: BookWrite[] = [];
  for (const { purchase } of listed) {
    const { id, invoiceDate } = purchase;
    const write: BookWrite = { id, invoiceDate };
    const entry = entries.get(id) ?? (booked[id]?.entry ? undefined : migrating?.ledger[id]);
    if (entry !== undefined) write.entry = entry;
    const status = told[id] ?? (booked[id]?.told ? undefined : migrating?.told[id]);
    if (status !== undefined) write.told = status;
    if (write.entry !== undefined || write.told !== undefined) writes.push(write);
  }
  return writes;
}

/** Review statuses: an invoice in one may still change any day, so every sync lists them. */
export const IN_REVIEW: ReadonlySet<string> = new Set(['pulled', 'pending_review']);

/**
 * Ids in review a sync remembers for the next (about 25 bytes each, carried twice): past this the oldest-dated are left
 * to the sweep, so a business that never reviews its backlog keeps a bounded carry, not an unbounded one.
 */
export const IN_REVIEW_KEPT = 4_000;

export function noteInReview(inReview: InReview, listed: readonly ListedPurchase[]): void {
  let held = Object.values(inReview).reduce((n, ids) => n + ids.length, 0);
  // The listings are newest first: what is noted once full is older than everything held.
  for (const { purchase } of listed) {
    if (!IN_REVIEW.has(purchase.status) || held >= IN_REVIEW_KEPT) continue;
    const ids = (inReview[purchase.invoiceDate] ??= []);
    if (!ids.includes(purchase.id)) {
      ids.push(purchase.id);
      held++;
    }
  }
}

/**
 * The dates of invoices in review at the last sync that are not now, less those this sync lists anyway: listed again,
 * one pass a date, so a confirmation or a rejection is seen in the sync after it, whatever the invoice's date.
 */
export function leftReview(before: InReview, now: InReview, listedAnyway: (date: string) => boolean): ListingPass[] {
  return Object.entries(before)
    .filter(([date, ids]) => !listedAnyway(date) && ids.some((id) => !now[date]?.includes(id)))
    .map(([date]) => date)
    .sort()
    .reverse()
    .map((date) => ({ name: 'left_review', fromDate: date, toDate: date }));
}

/** Ranges of dates a sync lists for the events it could not deliver: at most this many, gaps merged smallest first. */
const PENDING_RANGES = 8;

/** Events left pending at the last sync (a sink down): their dates listed again, so they go as soon as it is back. */
export function pendingPasses(pending: InReview, windowStart: string): ListingPass[] {
  const dates = Object.keys(pending)
    .filter((date) => date < windowStart && (pending[date]?.length ?? 0) > 0)
    .sort();
  const ranges = dates.map((date) => ({ from: date, to: date }));
  while (ranges.length > PENDING_RANGES) {
    let closest = 0;
    for (let i = 1; i < ranges.length - 1; i++)
      if (daysBetween(ranges[i]!.to, ranges[i + 1]!.from) < daysBetween(ranges[closest]!.to, ranges[closest + 1]!.from))
        closest = i;
    ranges.splice(closest, 2, { from: ranges[closest]!.from, to: ranges[closest + 1]!.to });
  }
  return ranges.reverse().map(({ from, to }) => ({ name: 'pending', fromDate: from, toDate: to }));
}

/** Ids of events a sync could not deliver, remembered for the next (as many as `IN_REVIEW_KEPT`); false: too many. */
export function notePending(pending: InReview, undelivered: readonly DueEvent[]): boolean {
  let held = Object.values(pending).reduce((n, ids) => n + ids.length, 0);
  for (const { event } of undelivered) {
    const ids = (pending[event.purchase.invoiceDate] ??= []);
    if (ids.includes(event.purchase.id)) continue;
    if (held >= IN_REVIEW_KEPT) return false;
    ids.push(event.purchase.id);
    held++;
  }
  return true;
}

/** A sync's first run: its listings from what the previous sync handed on (the schedule's last completion result). */
export function firstCarry(
  previous: ReturnType<typeof previousSync>,
  settings: ListingSettings,
  nowMs: number,
): PurchasesSyncCarry {
  const { passes, sweep } = planListings(settings, nowMs, previous.sweep, previous.pending);
  return {
    pulled: false,
    passes,
    pass: 0,
    cursor: null,
    counts: { pages: 0, seen: 0, newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 },
    sinkDown: false,
    runs: 1,
    sweep,
    inReview: { before: previous.inReview ?? {}, now: {} },
    ...(previous.migrating ? { migrating: previous.migrating } : {}),
  };
}
