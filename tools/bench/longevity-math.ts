/**
 * The longevity section's arithmetic, pure so the unit tests hold it to the definitions in the section's header
 * (tools/bench/longevity.ts): what the stock-in should have moved and what the shelves should hold, which movements
 * and events came twice or never, how long each change took to reach the sink and the shelves (in simulated hours),
 * the sync's share of the budget and its model at another scale, and how payloads and states grow.
 */
import { planListings } from '../../workflows/purchases-sync/ledger.js';
import type { ChangeKind, PlannedChange, WorldInvoice } from './longevity-world.js';
import { STOCK_PACE } from '../../src/contracts/stock-ledger.js';

export const HOUR_MS = 3_600_000;
/** Real milliseconds of a run k times faster than real time, in simulated hours. */
export const simHours = (realMs: number, k: number) => (realMs * k) / HOUR_MS;

/** A movement as the sandbox recorded it, its time as epoch ms. */
export interface LongevityMovement {
  branchId: string;
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  unitPrice: number | null;
  referenceId: string | null;
  at: number;
}

/** An event as the sink holds it, and when the bench first saw it there (epoch ms). */
export interface SinkEvent {
  id: string;
  type: string;
  purchaseId: string;
  status: string;
  fingerprint: string;
  seenAt: number;
}

export const groupKey = (branchId: string, itemId: string, action: string, unitPrice: number | null) =>
  `${branchId}|${itemId}|${action}|${unitPrice}`;

/** What one status change (or the start) moves: every line of the invoice, added or taken back. */
export interface StockMove {
  purchaseId: string;
  action: 'ADD' | 'DEDUCT';
  /** Index in the plan of the change that moves it; undefined: the invoice's status at the start. */
  change: number | undefined;
}

/**
 * The stock each invoice dated from `from` moves: an `ADD` of its lines each time it reaches `confirmed` (at the start
 * too), a `DEDUCT` each time it leaves it. `plan` in the order its changes are made.
 */
export function stockMoves(
  invoices: readonly WorldInvoice[],
  plan: readonly Pick<PlannedChange, 'purchaseId' | 'status'>[],
  from: string,
): StockMove[] {
  const byId = new Map(invoices.map((v) => [v.id, v]));
  const status = new Map<string, string | undefined>(invoices.map((v) => [v.id, v.arrives ? undefined : v.status]));
  const moves: StockMove[] = [];
  for (const v of invoices)
    if (!v.arrives && v.status === 'confirmed' && v.invoiceDate >= from)
      moves.push({ purchaseId: v.id, action: 'ADD', change: undefined });
  plan.forEach((c, index) => {
    const v = byId.get(c.purchaseId);
    if (!v) throw new RangeError(`longevity: the plan names ${c.purchaseId}, no invoice of the world`);
    const before = status.get(c.purchaseId);
    status.set(c.purchaseId, c.status);
    if (v.invoiceDate < from || (before === 'confirmed') === (c.status === 'confirmed')) return;
    moves.push({ purchaseId: c.purchaseId, action: c.status === 'confirmed' ? 'ADD' : 'DEDUCT', change: index });
  });
  return moves;
}

/** Each invoice's status at the end, after the plan. */
export function finalStatuses(
  invoices: readonly WorldInvoice[],
  plan: readonly Pick<PlannedChange, 'purchaseId' | 'status'>[],
): Map<string, string | undefined> {
  const status = new Map<string, string | undefined>(invoices.map((v) => [v.id, v.arrives ? undefined : v.status]));
  for (const c of plan) status.set(c.purchaseId, c.status);
  return status;
}

export interface StockGroup {
  key: string;
  expected: number;
  recorded: number;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Per (branch, item, action, price): what the moves make against what the stock-in's movements recorded. */
export function stockGroups(
  invoices: readonly WorldInvoice[],
  moves: readonly StockMove[],
  movements: readonly LongevityMovement[],
  isStockIn: (m: LongevityMovement) => boolean,
): { groups: StockGroup[]; over: StockGroup[]; under: StockGroup[]; duplicateReferenceIds: string[] } {
  const byId = new Map(invoices.map((v) => [v.id, v]));
  const groups = new Map<string, StockGroup>();
  const at = (key: string) => {
    const g = groups.get(key) ?? { key, expected: 0, recorded: 0 };
    groups.set(key, g);
    return g;
  };
  for (const move of moves) {
    const v = byId.get(move.purchaseId)!;
    for (const l of v.lines) {
      const g = at(groupKey(v.branchId, l.itemId, move.action, l.unitPrice));
      g.expected = round4(g.expected + l.quantity);
    }
  }
  for (const m of movements) {
    if (!isStockIn(m)) continue;
    const g = at(groupKey(m.branchId, m.itemId, m.action, m.unitPrice));
    g.recorded = round4(g.recorded + m.quantity);
  }
  const seen = new Map<string, number>();
  for (const m of movements) if (m.referenceId !== null) seen.set(m.referenceId, (seen.get(m.referenceId) ?? 0) + 1);
  const all = [...groups.values()];
  return {
    groups: all,
    over: all.filter((g) => g.recorded > g.expected),
    under: all.filter((g) => g.recorded < g.expected),
    duplicateReferenceIds: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
  };
}

/** Every (branch, item)'s quantity on hand as it should be: opening + lines of invoices confirmed at the end − sales. */
export function expectedOnHand(options: {
  invoices: readonly WorldInvoice[];
  final: ReadonlyMap<string, string | undefined>;
  from: string;
  opening: ReadonlyArray<{ branchId: string; itemId: string; quantity: number }>;
  sold: ReadonlyArray<{ branchId: string; itemId: string; quantity: number }>;
}): Map<string, number> {
  const out = new Map<string, number>();
  const move = (branchId: string, itemId: string, quantity: number) => {
    const key = `${branchId}|${itemId}`;
    out.set(key, round4((out.get(key) ?? 0) + quantity));
  };
  for (const o of options.opening) move(o.branchId, o.itemId, o.quantity);
  for (const v of options.invoices)
    if (v.invoiceDate >= options.from && options.final.get(v.id) === 'confirmed')
      for (const l of v.lines) move(v.branchId, l.itemId, l.quantity);
  for (const s of options.sold) move(s.branchId, s.itemId, -s.quantity);
  return out;
}

/**
 * `longevity.stockExact`: the (branch, item) pairs the run touched (any expected quantity, or any quantity on hand at
 * the sandbox) whose quantity on hand equals the expected one, as a share.
 */
export function stockExact(
  expected: ReadonlyMap<string, number>,
  onHand: ReadonlyMap<string, number>,
): { share: number; pairs: number; off: Array<{ key: string; expected: number; onHand: number }> } {
  const keys = new Set([...expected.keys(), ...[...onHand].filter(([, q]) => q !== 0).map(([k]) => k)]);
  const off: Array<{ key: string; expected: number; onHand: number }> = [];
  for (const key of keys) {
    const e = expected.get(key) ?? 0;
    const q = onHand.get(key) ?? 0;
    if (Math.abs(e - q) > 1e-6) off.push({ key, expected: e, onHand: q });
  }
  return { share: keys.size === 0 ? Number.NaN : (keys.size - off.length) / keys.size, pairs: keys.size, off };
}

/** A quantity some change asked of one (branch, item, action, price) at a moment (epoch ms). */
export interface StockDemand {
  group: string;
  quantity: number;
  at: number;
  /** Which change asked it (an index into the caller's list). */
  change: number;
}

/**
 * When each demand was carried: per group, demands and movements (both from the day's start) in time order; a demand
 * is carried by the first movement at or after it that brings the group's recorded quantity to the quantity asked up
 * to and including it. Undefined: not carried (yet).
 */
export function carriedAt(
  demands: readonly StockDemand[],
  movements: ReadonlyArray<{ group: string; quantity: number; at: number }>,
): Array<number | undefined> {
  const out = new Array<number | undefined>(demands.length).fill(undefined);
  const byGroup = new Map<string, number[]>();
  demands.forEach((d, i) => byGroup.set(d.group, [...(byGroup.get(d.group) ?? []), i]));
  for (const [group, indexes] of byGroup) {
    indexes.sort((a, b) => demands[a]!.at - demands[b]!.at);
    const recorded = movements.filter((m) => m.group === group).sort((a, b) => a.at - b.at);
    const cumulative: number[] = [];
    recorded.forEach((m, j) => cumulative.push(round4((cumulative[j - 1] ?? 0) + m.quantity)));
    let asked = 0;
    for (const i of indexes) {
      asked = round4(asked + demands[i]!.quantity);
      let j = cumulative.findIndex((c) => c >= asked);
      while (j >= 0 && j < recorded.length && recorded[j]!.at < demands[i]!.at) j++;
      if (j >= 0 && j < recorded.length) out[i] = recorded[j]!.at;
    }
  }
  return out;
}

export interface ChangeOutcome {
  purchaseId: string;
  kind: ChangeKind;
  old: boolean;
  /** When the bench made it (epoch ms). */
  at: number;
  /** When its event was first seen in the sink; undefined: never. */
  eventAt: number | undefined;
  /** Whether it moves stock, and when the last of its lines was recorded; undefined: not (all) recorded. */
  movesStock: boolean;
  stockAt: number | undefined;
  /** Simulated hours from the change to its event and its stock, whichever came last; undefined: lost. */
  delayHours: number | undefined;
  /** Why it counts as lost. */
  lost?: 'event' | 'stock' | 'both';
}

/** Each change's outcome from the sink's events and the carried stock. */
export function changeOutcomes(options: {
  changes: ReadonlyArray<Pick<PlannedChange, 'purchaseId' | 'kind' | 'status' | 'old'> & { at: number }>;
  events: readonly SinkEvent[];
  /** Per change: whether it moves stock, and when it was carried (undefined: not). */
  stock: ReadonlyArray<{ moves: boolean; at: number | undefined }>;
  k: number;
}): ChangeOutcome[] {
  const byPurchase = new Map<string, SinkEvent[]>();
  for (const e of options.events) byPurchase.set(e.purchaseId, [...(byPurchase.get(e.purchaseId) ?? []), e]);
  return options.changes.map((c, i) => {
    const arrival = c.kind === 'late_arrival' || c.kind === 'new_arrival';
    const event = (byPurchase.get(c.purchaseId) ?? [])
      .filter((e) => e.seenAt >= c.at && e.status === c.status && (!arrival || e.type === 'purchase.received'))
      .sort((a, b) => a.seenAt - b.seenAt)[0];
    const stock = options.stock[i]!;
    const stockLost = stock.moves && stock.at === undefined;
    const lost = !event && stockLost ? 'both' : !event ? 'event' : stockLost ? 'stock' : undefined;
    const last = Math.max(event?.seenAt ?? 0, stock.moves ? (stock.at ?? 0) : 0);
    return {
      purchaseId: c.purchaseId,
      kind: c.kind,
      old: c.old,
      at: c.at,
      eventAt: event?.seenAt,
      movesStock: stock.moves,
      stockAt: stock.at,
      delayHours: lost ? undefined : simHours(last - c.at, options.k),
      ...(lost ? { lost } : {}),
    };
  });
}

/**
 * Events delivered twice: an id the sink holds twice, or an event that repeats the fact of the one before it for the
 * same invoice (same status and fingerprint under another id).
 */
export function duplicateEvents(events: readonly SinkEvent[]): {
  sameId: number;
  sameFact: number;
  examples: string[];
} {
  const ids = new Map<string, number>();
  for (const e of events) ids.set(e.id, (ids.get(e.id) ?? 0) + 1);
  const sameIds = [...ids].filter(([, n]) => n > 1);
  const last = new Map<string, SinkEvent>();
  const repeats: string[] = [];
  for (const e of [...events].sort((a, b) => a.seenAt - b.seenAt)) {
    const before = last.get(e.purchaseId);
    if (before && before.id !== e.id && before.fingerprint === e.fingerprint && before.status === e.status)
      repeats.push(e.id);
    last.set(e.purchaseId, e);
  }
  return {
    sameId: sameIds.reduce((n, [, count]) => n + count - 1, 0),
    sameFact: repeats.length,
    examples: [...sameIds.map(([id]) => id), ...repeats].slice(0, 5),
  };
}

/** Which pass of a sync a page's listing belongs to, from its query. */
export type PassName = 'pull' | 'pulled' | 'pending_review' | 'recent' | 'sweep' | 'full' | 'left_review';

export function passOf(
  query: { status?: string; fromDate?: string; toDate?: string },
  dates: { windowStart: string; oldest: string },
): PassName {
  if (query.status === 'pulled') return 'pulled';
  if (query.status === 'pending_review') return 'pending_review';
  if (query.toDate === undefined) return query.fromDate === dates.windowStart ? 'recent' : 'full';
  // One date a pass: an invoice that left review since the last sync (a sweep's slice spans several in this run).
  return query.fromDate === query.toDate ? 'left_review' : 'sweep';
}

/** The sync's compliance requests over the day against what 120 a minute allows over it. */
export const budgetShare = (requests: number, requestsPerMinute: number, minutes: number) =>
  minutes > 0 ? requests / (requestsPerMinute * minutes) : Number.NaN;

export interface SyncModelOptions {
  invoicesPerDay: number;
  /** Dates older than the window carry invoices one day in `stride` (a quick run's thinner history). */
  stride: number;
  days: number;
  windowDays: number;
  horizonDays: number;
  sweepHours: number;
  /** Real minutes between two syncs of the model's day, and how many. */
  intervalMinutes: number;
  syncs: number;
  pageSize: number;
  /** Invoices listed by status in every sync: those `pulled`, those in review. */
  pulled: number;
  inReview: number;
  /** Old invoices (outside the window) leaving review a day: each one more listing of its date. */
  oldReviewExitsPerDay: number;
  /** The day's new invoices (dated today): in the recent window once they arrive. */
  newPerDay: number;
}

export interface SyncModelDay {
  /** Requests per pass over the day, and in all. */
  byPass: Record<PassName, number>;
  requests: number;
  /** Requests of one sync, on average. */
  perSync: number;
  /** The sweep's slice in days, per sync (the product's planListings). */
  sliceDays: number[];
  /** Syncs from one sweep's start to its end, and the simulated hours that is. */
  sweepCycleSyncs: number;
  sweepCycleHours: number;
  /**
   * The longest time a date waits between two listings that would show a change no review status lists (the window,
   * the sweep), over three days of syncs from a first sync (which lists every date), in the model's hours.
   */
  maxListingGapHours: number;
}

/**
 * A day of syncs at another scale: each sync's pull, its listings by status, the window, the sweep's slice as the
 * product plans it (planListings, from a first sync's hand-over), and one listing per old invoice leaving review; a
 * listing costs a page per `pageSize` invoices, and at least one.
 */
export function syncDayModel(options: SyncModelOptions, startMs = Date.UTC(2026, 10, 28, 6)): SyncModelDay {
  const pages = (n: number) => Math.max(1, Math.ceil(n / options.pageSize));
  const byPass: Record<PassName, number> = {
    pull: 0,
    pulled: 0,
    pending_review: 0,
    recent: 0,
    sweep: 0,
    full: 0,
    left_review: 0,
  };
  const settings = { windowDays: options.windowDays, horizonDays: options.horizonDays, sweepHours: options.sweepHours };
  const exitsPerSync = (options.oldReviewExitsPerDay * options.intervalMinutes) / (24 * 60);
  const at = (i: number) => startMs + i * options.intervalMinutes * 60_000;
  // From a first sync's hand-over: its sweep starts again from the window's edge.
  let sweep = planListings(settings, at(0), undefined).sweep;
  const sliceDays: number[] = [];
  for (let i = 1; i <= options.syncs; i++) {
    const planned = planListings(settings, at(i), sweep);
    sweep = planned.sweep;
    byPass.pull += 1;
    byPass.pulled += pages(options.pulled);
    byPass.pending_review += pages(options.inReview);
    const newSoFar = (options.newPerDay * i) / options.syncs;
    byPass.recent += pages(options.invoicesPerDay * options.windowDays + newSoFar);
    const slice = planned.passes.find((p) => p.name === 'sweep');
    if (slice?.fromDate && slice.toDate) {
      const days = Math.round((Date.parse(slice.toDate) - Date.parse(slice.fromDate)) / 86_400_000) + 1;
      sliceDays.push(days);
      byPass.sweep += pages((days * options.invoicesPerDay) / options.stride);
    }
    // Each old invoice leaving review is listed by its date (dates rarely shared at these rates): a page each.
    byPass.left_review += exitsPerSync;
  }
  // One whole sweep, from the window's edge to the horizon's end, however many syncs it takes.
  let cycle = Number.NaN;
  let state = planListings(settings, at(0), undefined).sweep;
  for (let i = 1; i <= 100_000 && Number.isNaN(cycle); i++) {
    state = planListings(settings, at(i), state).sweep;
    if (state.next === null) cycle = i;
  }
  // Each date's listings by the window or the sweep over three days (and at least three cycles), from a first sync.
  const steps = Math.max(3 * Math.ceil((24 * 60) / options.intervalMinutes), 3 * (Number.isNaN(cycle) ? 0 : cycle));
  const last = new Map<string, number>();
  let gap = 0;
  const seen = (date: string, i: number) => {
    const before = last.get(date);
    if (before !== undefined) gap = Math.max(gap, i - before);
    last.set(date, i);
  };
  let swept = planListings(settings, at(0), undefined).sweep;
  const firstDay = dayOf(at(0));
  for (let d = -options.horizonDays; d <= 0; d++) last.set(shiftDate(firstDay, d), 0);
  for (let i = 1; i <= Math.min(steps, 100_000); i++) {
    const planned = planListings(settings, at(i), swept);
    swept = planned.sweep;
    for (const p of planned.passes) {
      if (p.name !== 'recent' && p.name !== 'sweep') continue;
      const to = p.toDate ?? dayOf(at(i));
      for (let date = p.fromDate!; date <= to; date = shiftDate(date, 1)) seen(date, i);
    }
    // A date past the horizon is followed no more: its last wait does not count.
    last.delete(shiftDate(dayOf(at(i)), -options.horizonDays - 1));
  }
  // Dates still waiting at the end: their wait so far counts too.
  const end = Math.min(steps, 100_000);
  for (const [date, i] of last)
    if (date > shiftDate(dayOf(at(end)), -options.horizonDays)) gap = Math.max(gap, end - i);
  byPass.left_review = Math.round(byPass.left_review);
  const requests = Object.values(byPass).reduce((a, b) => a + b, 0);
  return {
    byPass,
    requests,
    perSync: requests / options.syncs,
    sliceDays,
    sweepCycleSyncs: cycle,
    sweepCycleHours: (cycle * options.intervalMinutes) / 60,
    maxListingGapHours: (gap * options.intervalMinutes) / 60,
  };
}

/** The business's calendar day (Kenyan) at `ms`, as the sync reads it. */
const dayOf = (ms: number) => new Date(ms + 3 * HOUR_MS).toISOString().slice(0, 10);
const shiftDate = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * Whether the largest payloads of one kind were cut to a fixed number of records (a batch): at least two of them carry
 * the most. Such a kind is bounded whatever the scale.
 */
export const chunkBound = (records: readonly number[]) =>
  records.length >= 2 && records.filter((r) => r === Math.max(...records)).length >= 2 && Math.max(...records) > 1;

/** A payload's size at another scale: its records (all but a small fixed part of it) `ratio` times as many. */
export function scaledPayload(options: { bytes: number; records: number; ratio: number }): number {
  return options.records <= 0 ? options.bytes : Math.round(options.bytes * options.ratio);
}

/** How a quick run's numbers of things compare with the full run's. */
export interface RunScales {
  /** Invoices of a day with invoices (a book's, a page's). */
  density: number;
  /** Invoices the business holds (what a stock-in is told by a first sync). */
  volume: number;
  /** Invoices in review (a sync's carry and result). */
  review: number;
  /** Changes an hour (what a stock-in holds in a day: the last hour's). */
  activity: number;
  mappings: number;
  /** Invoices a branch receives a day (a ledger's lines, its items). */
  perBranch: number;
}

/**
 * Activities, signals and updates whose records are bounded whatever the business's size: one page of the sync (at
 * most 100 invoices; a quick run's first sync lists full pages, so its largest is the full run's), or one update of
 * the mappings client (1,000 mappings).
 */
const BOUNDED = new Set([
  'listPurchasesPage',
  'deliverPurchaseEvents',
  'tellStockIn',
  'readPurchaseBooks',
  'purchasesSeen',
  'matchItemNames',
  'findStockInMappings',
  'putMappings',
  'changeStockInMappings',
  'handOverStock',
]);

/**
 * What a payload's records grow with at the full run's scale (`ratio`; 1: bounded, as measured), by what carries it:
 * a page of the sync, an update of the mappings client; a purchases book's records (one date's); a sync's carry and
 * result (the invoices in review); a stock-in's carry and its writes to the books (the business's invoices, as a first
 * sync tells them: unless `chunkBound` finds them cut to a fixed size); mapping buckets (the mappings); a ledger (a
 * branch's lines; its carry up to its caps, `scaledLedgerCarry`); a sale (nothing).
 */
export function payloadScale(site: { workflowType: string; name: string }, scales: RunScales): number {
  if (BOUNDED.has(site.name)) return 1;
  if (site.workflowType === 'purchasesSyncWorkflow') return site.name === 'writePurchaseBooks' ? 1 : scales.review;
  if (site.workflowType === 'stockInWorkflow') return scales.volume;
  if (site.workflowType === 'purchasesBookWorkflow') return scales.density;
  if (/mapping/i.test(site.workflowType)) return scales.mappings;
  if (/ledger/i.test(site.workflowType)) return scales.perBranch;
  return 1;
}

/**
 * Kept by a stock ledger's carry at most (workflows/stock-ledger/book.ts: REMEMBERED_LINE_IDS, ON_HAND_KEPT): line ids
 * of lines recorded lately, the items whose quantity on hand it last knew, and the incoming lines the stock-in's pace
 * lets it hold (STOCK_PACE: its cap and one hand-over not checked first).
 */
export const LEDGER_CARRY_CAPS = {
  lineIds: 3_000,
  onHand: 2_000,
  pending: STOCK_PACE.ledgerLines + STOCK_PACE.handOverLines,
};

const json = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');

/**
 * A ledger's carry at another scale: its remembered line ids, quantities on hand and waiting lines grow `ratio` times
 * up to the ledger's caps, its open movements (a burst's) `ratio` times; the rest stays. Encryption's overhead
 * on `bytes` (the stored size) is kept in proportion.
 */
export function scaledLedgerCarry(bytes: number, value: unknown, ratio: number): number {
  const carried = (value as { carried?: Record<string, unknown> } | undefined)?.carried;
  if (!carried) return Math.round(bytes * ratio);
  const whole = json(value);
  const part = (name: string) => json(carried[name]);
  const count = (name: string) => {
    const v = carried[name];
    return Array.isArray(v) ? v.length : typeof v === 'object' && v ? Object.keys(v).length : 0;
  };
  const capped = (name: 'lineIds' | 'onHand' | 'pending') => {
    const n = count(name);
    return n === 0 ? 0 : (part(name) / n) * Math.min(LEDGER_CARRY_CAPS[name], n * ratio);
  };
  const grown =
    whole -
    part('lineIds') -
    part('onHand') -
    part('pending') -
    part('open') +
    capped('lineIds') +
    capped('onHand') +
    capped('pending') +
    part('open') * ratio;
  return Math.round((bytes * grown) / whole);
}

/** The longest array (or record map) in a decoded payload, to three levels down: the records it carries. */
export function recordsIn(value: unknown, depth = 3): number {
  if (depth < 0 || typeof value !== 'object' || value === null) return 0;
  const own = Array.isArray(value) ? value.length : 0;
  const values = Array.isArray(value) ? value : Object.values(value);
  const mapLike = !Array.isArray(value) && values.length >= 8 && values.every((v) => typeof v === 'object' && v);
  return Math.max(own, mapLike ? values.length : 0, ...values.map((v) => recordsIn(v, depth - 1)));
}
