// Pure and deterministic, like the rules: the reconciliation workflow runs it on their result.
import type {
  Pairing,
  ReconcileBillPayment,
  ReconciliationList,
  ReconciliationResult,
  ReconciliationSummary,
  Tie,
} from '../contracts/reconciliation.js';
import { RESULT_IDS_PER_ENTRY, RESULT_LIST_LIMITS, RESULT_MAX_BYTES } from './limits.js';

export interface SummaryLimits {
  lists: Readonly<Record<ReconciliationList, number>>;
  idsPerEntry: number;
  maxBytes: number;
}

export const SUMMARY_LIMITS: SummaryLimits = {
  lists: RESULT_LIST_LIMITS,
  idsPerEntry: RESULT_IDS_PER_ENTRY,
  maxBytes: RESULT_MAX_BYTES,
};

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Bytes of the text in UTF-8 (the workflow has no Buffer). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

function cutPairing(pairing: Pairing, ids: number): Pairing {
  if (pairing.billPaymentIds.length <= ids) return pairing;
  return {
    ...pairing,
    billPaymentIds: pairing.billPaymentIds.slice(0, ids),
    omittedBillPaymentIds: pairing.billPaymentIds.length - ids,
  };
}

function cutTie(tie: Tie, ids: number): Tie {
  if (tie.purchaseIds.length <= ids && tie.billPaymentIds.length <= ids) return tie;
  return {
    ...tie,
    purchaseIds: tie.purchaseIds.slice(0, ids),
    billPaymentIds: tie.billPaymentIds.slice(0, ids),
    omitted: {
      purchaseIds: Math.max(0, tie.purchaseIds.length - ids),
      billPaymentIds: Math.max(0, tie.billPaymentIds.length - ids),
    },
  };
}

/**
 * Each list in the order a person should work through it, so a capped list keeps what matters most: unpaid invoices
 * oldest first, mismatches by the money at stake, suggestions by amount, payments without an invoice newest first
 * (the older one is, the likelier its invoice is older than the period).
 */
function ordered(result: ReconciliationResult, billPayments: readonly ReconcileBillPayment[]) {
  const payments = new Map(billPayments.map((b) => [b.id, b]));
  const age = (id: string) => result.unpaidAgeDays[id] ?? -Infinity;
  const paymentDate = (id: string) => payments.get(id)?.date ?? '';
  const amount = (id: string) => payments.get(id)?.totalAmount ?? 0;
  return {
    matched: result.matched,
    suggested: result.suggested.toSorted((a, b) => b.invoiceTotal - a.invoiceTotal || byId(a.purchaseId, b.purchaseId)),
    amountMismatches: result.amountMismatches.toSorted(
      (a, b) => Math.abs(b.difference) - Math.abs(a.difference) || byId(a.purchaseId, b.purchaseId),
    ),
    unpaidPurchases: result.unpaidPurchases.toSorted((a, b) => age(b) - age(a) || byId(a, b)),
    unmatchedPayments: result.unmatchedPayments.toSorted(
      (a, b) => byId(paymentDate(b), paymentDate(a)) || amount(b) - amount(a) || byId(a, b),
    ),
    rejectedPurchases: result.rejectedPurchases,
    ties: result.ties,
  };
}

function capped(
  result: ReconciliationResult,
  lists: ReturnType<typeof ordered>,
  limit: (list: ReconciliationList) => number,
  ids: number,
): ReconciliationSummary {
  const truncated: ReconciliationSummary['truncated'] = {};
  const keep = <T>(list: ReconciliationList, entries: T[]): T[] => {
    const n = limit(list);
    if (entries.length > n) truncated[list] = entries.length - n;
    return entries.slice(0, n);
  };
  const unpaidPurchases = keep('unpaidPurchases', lists.unpaidPurchases);
  return {
    asOf: result.asOf,
    period: result.period,
    outsidePeriod: result.outsidePeriod,
    matched: keep('matched', lists.matched).map((p) => cutPairing(p, ids)),
    suggested: keep('suggested', lists.suggested).map((p) => cutPairing(p, ids)),
    amountMismatches: keep('amountMismatches', lists.amountMismatches).map((p) => cutPairing(p, ids)),
    unpaidPurchases,
    unmatchedPayments: keep('unmatchedPayments', lists.unmatchedPayments),
    rejectedPurchases: keep('rejectedPurchases', lists.rejectedPurchases),
    ties: keep('ties', lists.ties).map((t) => cutTie(t, ids)),
    unpaidAgeDays: Object.fromEntries(unpaidPurchases.map((id) => [id, result.unpaidAgeDays[id] ?? null])),
    counts: result.counts,
    truncated,
  };
}

/**
 * The workflow's summary of a result: every count, and at most `limits.lists` entries of each list, each holding at
 * most `limits.idsPerEntry` ids. Should long ids still make it larger than `limits.maxBytes`, the lists are halved
 * until it fits. What is left out is said in `truncated` (and `omitted…` on an entry); `npm run reconcile` lists all.
 */
export function summarize(
  result: ReconciliationResult,
  billPayments: readonly ReconcileBillPayment[],
  limits: SummaryLimits = SUMMARY_LIMITS,
): ReconciliationSummary {
  const lists = ordered(result, billPayments);
  for (let share = 1; ; share /= 2) {
    const limit = (list: ReconciliationList) => Math.floor(limits.lists[list] * share);
    const summary = capped(result, lists, limit, limits.idsPerEntry);
    const empty = (Object.keys(limits.lists) as ReconciliationList[]).every((list) => limit(list) === 0);
    if (empty || utf8Length(JSON.stringify(summary)) <= limits.maxBytes) return summary;
  }
}
