// Pure and deterministic (no I/O, clock or Temporal): the reconciliation workflow runs this code itself.
// The rules and categories are described in docs/reconciliation.md.
import {
  MAX_PERIOD_DAYS,
  type MatchRuleId,
  type Pairing,
  type ReconcileBillPayment,
  type ReconcileOptions,
  type ReconcilePurchase,
  type ReconciliationPeriod,
  type ReconciliationResult,
  type Tie,
} from '../contracts/reconciliation.js';

export const DEFAULT_RECONCILE_OPTIONS: Readonly<ReconcileOptions> = {
  amountTolerance: 1,
  dateWindowDays: 30,
  currency: 'KES',
  periodDays: 90,
};

/** "inv. 02403", "INV-2403" and "Inv2403" all read INV 2403. */
function referenceTokens(text: string): string[] {
  const upper = text.normalize('NFKD').toUpperCase();
  const runs = upper.match(/\p{L}+|[0-9]+/gu) ?? [];
  return runs.map((run) => (/^[0-9]+$/.test(run) ? run.replace(/^0+(?=[0-9])/, '') : run));
}

/** eTIMS numbers are often small integers: a shorter one is matched only by a whole reference, not "27 crates". */
const MIN_EMBEDDED_REFERENCE_LENGTH = 4;

/** Words that only say what kind of company a supplier is; dropped from the end of a name. */
const LEGAL_SUFFIXES: ReadonlySet<string> = new Set(
  'LTD LIMITED PLC INC LLC LLP CO COMPANY CORP CORPORATION K KENYA EA'.split(' '),
);

/**
 * "KIBO WHOLESALERS LIMITED", "Kibo Wholesalers (K) Ltd." and "Kibo  Wholesalers" are one supplier. Empty when the
 * name is missing: an unnamed supplier is never the same as another.
 */
export function supplierKey(name: string | null | undefined): string {
  const upper = (name ?? '').normalize('NFKD').toUpperCase().replace(/&/g, ' AND ');
  const words = upper.match(/\p{L}+|[0-9]+/gu) ?? [];
  while (words.length > 1 && LEGAL_SUFFIXES.has(words[words.length - 1]!)) words.pop();
  return words.join('');
}

/** A date as a day number (days since 1970-01-01 UTC), from YYYY-MM-DD or a date-time that starts with it. */
export function dayNumber(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!match) return undefined;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  // 2025-02-30 is not a day: Date.UTC would roll it over silently.
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real ? date.getTime() / 86_400_000 : undefined;
}

/** The day (YYYY-MM-DD) of a day number. */
export function dayString(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** Whether `periodDays` is a whole number of days a run may reconcile. */
export function isPeriodDays(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_PERIOD_DAYS;
}

/** The options with their defaults, refused when the rules could not apply them. */
function reconcileOptions(optionsIn: Partial<ReconcileOptions>): ReconcileOptions {
  const options: ReconcileOptions = { ...DEFAULT_RECONCILE_OPTIONS, ...optionsIn };
  if (!(options.amountTolerance >= 0) || !(options.dateWindowDays >= 0))
    throw new RangeError('amountTolerance and dateWindowDays must be numbers of at least 0');
  if (!isPeriodDays(options.periodDays))
    throw new RangeError(`periodDays must be a whole number from 1 to ${MAX_PERIOD_DAYS}`);
  return options;
}

/**
 * The `periodDays` days that end at `asOf`; the first day a payment can still pair with one of its invoices, a
 * suggestion window before the period (a payment named by reference is seldom made earlier); and the first day a
 * payment without an invoice is listed, a window into the period: from then on every invoice it could be for by
 * date has been read.
 */
export function reconciliationPeriod(asOf: string, optionsIn: Partial<ReconcileOptions> = {}): ReconciliationPeriod {
  const options = reconcileOptions(optionsIn);
  const asOfDay = dayNumber(asOf);
  if (asOfDay === undefined) throw new RangeError(`asOf must be a date YYYY-MM-DD, not ${JSON.stringify(asOf)}`);
  const fromDay = asOfDay - (options.periodDays - 1);
  return {
    from: dayString(fromDay),
    to: dayString(asOfDay),
    days: options.periodDays,
    paymentsFrom: dayString(fromDay - Math.ceil(options.dateWindowDays)),
    unmatchedPaymentsFrom: dayString(fromDay + Math.ceil(options.dateWindowDays)),
  };
}

/**
 * Follows a bill payment list read newest first (by payment date) and says when to stop: at a page whose payments
 * are all older than `period.paymentsFrom`, as long as every page so far came newest first. A list that is not in
 * that order (a service that ignored the sort) is read to its end, so nothing of the period is missed.
 */
export function billPaymentListEnd(period: ReconciliationPeriod): (page: readonly ReconcileBillPayment[]) => boolean {
  const oldestWanted = dayNumber(period.paymentsFrom)!;
  let newestFirst = true;
  let previous = Infinity;
  return (page) => {
    const days = page.map((payment) => dayNumber(payment.date));
    for (const day of days) {
      if (day === undefined) continue;
      if (day > previous) newestFirst = false;
      previous = day;
    }
    return newestFirst && page.length > 0 && days.every((day) => day !== undefined && day < oldestWanted);
  };
}

const cents = (amount: number): number => Math.round(amount * 100);
const fromCents = (value: number): number => value / 100;

/**
 * `link`: payments tied to an invoice by its number in their references, or by supplier and date. `amounts`: whether
 * the paid total must agree with the invoice within the tolerance, or must not.
 */
export const MATCH_RULES = [
  { id: 'reference-amount-agrees', category: 'matched', link: 'reference', amounts: 'agree' },
  { id: 'reference-amount-differs', category: 'amountMismatches', link: 'reference', amounts: 'disagree' },
  { id: 'supplier-amount-date', category: 'suggested', link: 'supplier', amounts: 'agree' },
] as const satisfies ReadonlyArray<{
  id: MatchRuleId;
  category: keyof ReconciliationResult;
  link: 'reference' | 'supplier';
  amounts: 'agree' | 'disagree';
}>;

type MatchRule = (typeof MATCH_RULES)[number];

/** What becomes of the invoices no match rule took, first rule that applies. */
export const RESIDUAL_RULES = [
  { id: 'rejected', category: 'rejectedPurchases', applies: (p: ReconcilePurchase) => p.status === 'rejected' },
  { id: 'unpaid', category: 'unpaidPurchases', applies: () => true },
] as const;

interface Allocation {
  paymentId: string;
  cents: number;
  /** The payment is in the invoices' currency, so its amount can be compared. */
  comparable: boolean;
  currency: string;
}

/** Purchases whose invoice number a text mentions: a run of its words, or the whole text for short numbers. */
type InvoiceNumberIndex = (text: string) => ReconcilePurchase[];

function invoiceNumberIndex(purchases: readonly ReconcilePurchase[]): InvoiceNumberIndex {
  const byKey = Map.groupBy(purchases, (purchase) => referenceTokens(purchase.supplierInvoiceNumber).join(' '));
  byKey.delete(''); // a number without letters or digits is mentioned by nothing
  const longestKey = [...byKey.keys()].reduce((longest, key) => Math.max(longest, key.split(' ').length), 0);
  return (text) => {
    const tokens = referenceTokens(text);
    const found = new Map<string, ReconcilePurchase>();
    for (let start = 0; start < tokens.length; start++) {
      for (let end = start + 1; end <= Math.min(tokens.length, start + longestKey); end++) {
        const run = tokens.slice(start, end);
        const whole = start === 0 && end === tokens.length;
        if (!whole && run.join('').length < MIN_EMBEDDED_REFERENCE_LENGTH) continue;
        for (const purchase of byKey.get(run.join(' ')) ?? []) found.set(purchase.id, purchase);
      }
    }
    return [...found.values()];
  };
}

type Resolution = { purchase: ReconcilePurchase } | { ambiguous: ReconcilePurchase[] } | undefined;

function withinTolerance(aCents: number, bCents: number, options: ReconcileOptions): boolean {
  return Math.abs(aCents - bCents) <= cents(options.amountTolerance);
}

/** The one invoice a reference means, else a tie: docs/contract-assumptions.md, R4. */
function resolve(
  mentionedIn: InvoiceNumberIndex,
  text: string | null | undefined,
  payment: ReconcileBillPayment,
  amountCents: number,
  options: ReconcileOptions,
): Resolution {
  if (!text) return undefined;
  const hits = mentionedIn(text);
  if (hits.length <= 1) return hits[0] ? { purchase: hits[0] } : undefined;
  const payee = supplierKey(payment.supplierRef?.name);
  const sameSupplier = payee === '' ? [] : hits.filter((p) => supplierKey(p.supplier.name) === payee);
  if (sameSupplier.length === 1) return { purchase: sameSupplier[0]! };
  const pool = sameSupplier.length > 1 ? sameSupplier : hits;
  const sameAmount = pool.filter((p) => withinTolerance(amountCents, cents(p.totals.total), options));
  if (sameAmount.length === 1) return { purchase: sameAmount[0]! };
  return { ambiguous: pool };
}

/** What each payment pays towards which invoice: docs/contract-assumptions.md, R3. */
function linkByReference(
  purchases: readonly ReconcilePurchase[],
  payments: readonly ReconcileBillPayment[],
  options: ReconcileOptions,
) {
  const index = invoiceNumberIndex(purchases);
  const allocations = new Map<string, Allocation[]>(); // by purchase id
  const ties: Tie[] = [];
  // Payments whose reference named invoices ambiguously and that nothing else claimed: kept out of suggestions.
  const ambiguous = new Set<string>();
  for (const payment of payments) {
    const comparable = payment.currency.trim().toUpperCase() === options.currency.trim().toUpperCase();
    const lines = payment.lines ?? [];
    const totalCents = cents(payment.totalAmount);
    const shares = new Map<string, number>();
    let tied = false;
    const tie = (pool: ReconcilePurchase[]) => {
      tied = true;
      ties.push({ reason: 'same_reference', purchaseIds: pool.map((p) => p.id).sort(), billPaymentIds: [payment.id] });
    };

    const billCode = resolve(index, payment.billRef?.billCode, payment, totalCents, options);
    const main = billCode && 'purchase' in billCode ? billCode.purchase : undefined;
    if (billCode && 'ambiguous' in billCode) tie(billCode.ambiguous);
    let otherLinesCents = 0;
    for (const line of lines) {
      // A line without an amount is the whole payment only when it is the only line.
      const lineCents = line.amount != null ? cents(line.amount) : lines.length === 1 ? totalCents : 0;
      const target = resolve(index, line.reference, payment, lineCents, options);
      if (target && 'ambiguous' in target) tie(target.ambiguous);
      if (!target || !('purchase' in target) || target.purchase.id === main?.id) continue;
      shares.set(target.purchase.id, (shares.get(target.purchase.id) ?? 0) + lineCents);
      otherLinesCents += lineCents;
    }
    if (main) shares.set(main.id, totalCents - otherLinesCents);

    if (shares.size === 0 && tied) ambiguous.add(payment.id);
    for (const [purchaseId, share] of shares) {
      const list = allocations.get(purchaseId) ?? [];
      list.push({ paymentId: payment.id, cents: share, comparable, currency: payment.currency });
      allocations.set(purchaseId, list);
    }
  }
  return { allocations, ties, ambiguous };
}

interface Candidate {
  purchase: ReconcilePurchase;
  allocations: Allocation[];
}

/** Groups of invoices and payments connected by candidate edges (union-find over ids). */
function components(edges: ReadonlyArray<[string, string]>): Array<{ purchaseIds: string[]; paymentIds: string[] }> {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(x, root);
    return root;
  };
  for (const [p, b] of edges) {
    const [pk, bk] = [`p:${p}`, `b:${b}`];
    for (const key of [pk, bk]) if (!parent.has(key)) parent.set(key, key);
    parent.set(find(pk), find(bk));
  }
  const ids = (keys: string[], kind: string) => keys.filter((key) => key.startsWith(kind)).map((key) => key.slice(2));
  return [...Map.groupBy(parent.keys(), (key) => find(key)).values()].map((keys) => ({
    purchaseIds: ids(keys, 'p:').sort(),
    paymentIds: ids(keys, 'b:').sort(),
  }));
}

/** Among what is left, as R5 of docs/contract-assumptions.md; a group of more than one invoice or payment ties. */
function linkBySupplier(
  rule: MatchRule,
  purchases: readonly ReconcilePurchase[],
  payments: readonly ReconcileBillPayment[],
  options: ReconcileOptions,
): { candidates: Candidate[]; ties: Tie[] } {
  const currency = options.currency.trim().toUpperCase();
  // Each payment's day read once: the loop below compares it with every invoice of the same supplier.
  const paymentDays = new Map<string, number>();
  for (const b of payments) {
    const day = dayNumber(b.date);
    if (day !== undefined && b.currency.trim().toUpperCase() === currency) paymentDays.set(b.id, day);
  }
  const dated = payments.filter((b) => paymentDays.has(b.id));
  const bySupplier = Map.groupBy(dated, (payment) => supplierKey(payment.supplierRef?.name));
  bySupplier.delete(''); // an unnamed supplier is never the same as another
  const edges: Array<[string, string]> = [];
  for (const purchase of purchases) {
    const invoiceDay = dayNumber(purchase.invoiceDate);
    if (invoiceDay === undefined) continue;
    for (const payment of bySupplier.get(supplierKey(purchase.supplier.name)) ?? []) {
      if (Math.abs(paymentDays.get(payment.id)! - invoiceDay) > options.dateWindowDays) continue;
      const agrees = withinTolerance(cents(payment.totalAmount), cents(purchase.totals.total), options);
      if (agrees === (rule.amounts === 'agree')) edges.push([purchase.id, payment.id]);
    }
  }
  const purchaseById = new Map(purchases.map((p) => [p.id, p]));
  const paymentById = new Map(payments.map((b) => [b.id, b]));
  const candidates: Candidate[] = [];
  const ties: Tie[] = [];
  for (const group of components(edges)) {
    if (group.purchaseIds.length === 1 && group.paymentIds.length === 1) {
      const payment = paymentById.get(group.paymentIds[0]!)!;
      candidates.push({
        purchase: purchaseById.get(group.purchaseIds[0]!)!,
        allocations: [
          { paymentId: payment.id, cents: cents(payment.totalAmount), comparable: true, currency: payment.currency },
        ],
      });
    } else {
      ties.push({ reason: 'several_candidates', purchaseIds: group.purchaseIds, billPaymentIds: group.paymentIds });
    }
  }
  return { candidates, ties };
}

function pairing(rule: MatchRule, candidate: Candidate): Pairing {
  const invoiceTotal = cents(candidate.purchase.totals.total);
  const paid = candidate.allocations.reduce((sum, a) => sum + a.cents, 0);
  const foreign = candidate.allocations.filter((a) => !a.comparable);
  return {
    purchaseId: candidate.purchase.id,
    billPaymentIds: [...new Set(candidate.allocations.map((a) => a.paymentId))].sort(),
    rule: rule.id,
    invoiceTotal: fromCents(invoiceTotal),
    paid: fromCents(paid),
    difference: fromCents(paid - invoiceTotal),
    ...(foreign.length > 0 ? { note: foreign.map((a) => `${a.paymentId} is in ${a.currency}`).join('; ') } : {}),
  };
}

function uniqueById<T extends { id: string }>(items: readonly T[]): T[] {
  return [...new Map(items.map((item) => [item.id, item])).values()];
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Within [from, to]; an unreadable date is taken as inside: the service listed it for the period. */
function dated(text: string, from: number, to: number): boolean {
  const day = dayNumber(text);
  return day === undefined || (day >= from && day <= to);
}

/**
 * Every invoice of the period (`periodDays` ending at `asOf`, YYYY-MM-DD, the day unpaid invoices' ages count to)
 * ends in exactly one category, and so does every payment dated in the period. Records outside it are only counted:
 * docs/reconciliation.md, "The period".
 */
export function reconcile(
  purchasesIn: readonly ReconcilePurchase[],
  paymentsIn: readonly ReconcileBillPayment[],
  asOf: string,
  optionsIn: Partial<ReconcileOptions> = {},
): ReconciliationResult {
  const options = reconcileOptions(optionsIn);
  const period = reconciliationPeriod(asOf, options);
  const asOfDay = dayNumber(period.to)!;
  const fromDay = dayNumber(period.from)!;
  const paymentsFromDay = dayNumber(period.paymentsFrom)!;

  const readPurchases = uniqueById(purchasesIn);
  const readPayments = uniqueById(paymentsIn);
  // The rules see exactly these, however many pages the lists were read in: the CLI and the workflow agree.
  const purchases = readPurchases.filter((p) => dated(p.invoiceDate, fromDay, asOfDay));
  const payments = readPayments.filter((b) => dated(b.date, paymentsFromDay, asOfDay));
  const openPurchases = new Map(purchases.map((p) => [p.id, p]));
  const openPayments = new Map(payments.map((b) => [b.id, b]));
  const result: Record<MatchRule['category'], Pairing[]> = { matched: [], suggested: [], amountMismatches: [] };
  // Over everything, not what is left: a payment paying several invoices must reach each of them.
  const references = linkByReference(purchases, payments, options);
  const ties: Tie[] = [...references.ties];

  for (const rule of MATCH_RULES) {
    let candidates: Candidate[];
    if (rule.link === 'reference') {
      candidates = [...openPurchases.values()].flatMap((purchase) => {
        const allocations = references.allocations.get(purchase.id);
        return allocations ? [{ purchase, allocations }] : [];
      });
    } else {
      const eligible = [...openPurchases.values()].filter((p) => p.status !== 'rejected');
      const free = [...openPayments.values()].filter((b) => !references.ambiguous.has(b.id));
      const linked = linkBySupplier(rule, eligible, free, options);
      candidates = linked.candidates;
      ties.push(...linked.ties);
    }
    for (const candidate of candidates) {
      const paired = pairing(rule, candidate);
      // A payment in another currency (the note says which) never agrees.
      const agrees = !paired.note && withinTolerance(cents(paired.paid), cents(paired.invoiceTotal), options);
      if (agrees !== (rule.amounts === 'agree')) continue;
      result[rule.category].push(paired);
      openPurchases.delete(candidate.purchase.id);
      for (const allocation of candidate.allocations) openPayments.delete(allocation.paymentId);
    }
  }

  const residual = { rejectedPurchases: [] as string[], unpaidPurchases: [] as string[] };
  for (const purchase of openPurchases.values())
    residual[RESIDUAL_RULES.find((r) => r.applies(purchase))!.category].push(purchase.id);
  const ageDays = (id: string) => {
    const day = dayNumber(openPurchases.get(id)!.invoiceDate);
    return day === undefined ? null : asOfDay - day;
  };

  for (const list of Object.values(result)) list.sort((a, b) => byId(a.purchaseId, b.purchaseId));
  const unpaidPurchases = residual.unpaidPurchases.sort(byId);
  const rejectedPurchases = residual.rejectedPurchases.sort(byId);
  // A tie whose invoices were all settled by another payment no longer needs anyone.
  const openTies = ties.filter(
    (t) => t.purchaseIds.some((id) => openPurchases.has(id)) || t.billPaymentIds.some((id) => openPayments.has(id)),
  );
  // A payment that pairs with no invoice of the period is only called "without an invoice" once the period holds
  // every invoice it could be for by date. An earlier one most often pays an invoice older than the period (its
  // payment terms): the run cannot tell, so it is left out, not reported as a finding (R11). Tied ones stay (R6).
  const judgedDay = dayNumber(period.unmatchedPaymentsFrom)!;
  const tied = new Set(openTies.flatMap((t) => t.billPaymentIds));
  const earlier = (b: ReconcileBillPayment) => !tied.has(b.id) && (dayNumber(b.date) ?? judgedDay) < judgedDay;
  const unmatchedPayments = [...openPayments.values()]
    .filter((b) => !earlier(b))
    .map((b) => b.id)
    .sort(byId);
  const leftOut = [...openPayments.values()].filter(earlier).length;
  const lists = { ...result, unpaidPurchases, unmatchedPayments, rejectedPurchases, ties: openTies };
  const counts = Object.fromEntries(Object.entries(lists).map(([key, list]) => [key, list.length]));
  return {
    asOf,
    period,
    outsidePeriod: {
      purchases: readPurchases.length - purchases.length,
      billPayments: readPayments.length - payments.length + leftOut,
    },
    ...lists,
    unpaidAgeDays: Object.fromEntries(unpaidPurchases.map((id) => [id, ageDays(id)])),
    counts: {
      purchases: purchases.length,
      billPayments: payments.length - leftOut,
      ...counts,
    } as ReconciliationResult['counts'],
  };
}

/** The calendar day (YYYY-MM-DD) of an instant in a time zone; the default is the businesses' own, Nairobi. */
export function calendarDay(epochMs: number, timeZone = 'Africa/Nairobi'): string {
  const format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return format.format(epochMs); // en-CA writes dates as YYYY-MM-DD
}
