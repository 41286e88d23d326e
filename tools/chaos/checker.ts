/**
 * The independent checker: from what was started (the driver's list) and what the sandbox holds (its inspection
 * API: documents and stock movements; its request log), never from workflow state, it says per sale whether the
 * world is right, and per application whether its sales are and whether it kept to its budget.
 *
 * A document belongs to a sale by business and trader invoice number; a credit note by `originalSaleId`; a stock
 * movement to a document when its `referenceId` starts with an idempotency key the sandbox recorded for that
 * document (the worker's documented convention: `<document key>:<line>:<action>`, the line's id). Anything that
 * belongs to nothing started is counted too: a stray document is a duplicate, a stray movement a stock error. A
 * sale, and anything stray, belongs to the application of its business (the run's own world says which).
 *
 * Stock reported through a branch's ledger may carry lines of many sales in one movement (referenceId
 * `stk:…`), which names no sale: such a sale's own movements must still be right, but a line of it without one is
 * no error of the sale. What proves every line carried exactly once is the rule over all movements
 * (exactly-once.ts): per business, branch and item, recorded quantities equal the lines', no referenceId twice.
 *
 * Supplier invoices confirmed at the businesses taking stock in come in through the same ledgers (referenceId
 * `sin-v1:…` alone, or merged): such movements belong to incoming stock, and the items the invoices name are judged
 * by their net (incoming.ts).
 */
import type { InspectedDocument } from '../../sandbox/inspector.js';
import type { StockMovement } from '../../sandbox/compliance/model.js';
import type { RequestRecord } from '../../sandbox/shared/request-stats.js';
import { budgetOf, type BudgetVerdict } from './budget.js';
import { balancesOff, exactlyOnce, isProbe, type ExactlyOnceVerdict, type ExpectedStockLine } from './exactly-once.js';
import {
  incomingLines,
  incomingVerdict,
  STOCK_IN_MOVEMENT_PREFIX,
  type IncomingInput,
  type IncomingVerdict,
} from './incoming.js';

/**
 * How a sale's stock is reported, as the code that started it does:
 * - `per-line` (before the ledger): one movement per stock-tracked line, its referenceId the line's id;
 * - `ledger`: its lines are handed to its branch's ledger, which sends a line alone (referenceId the line's id) or
 *   merged with other sales' lines of the same item (referenceId `stk:…`).
 */
export type StockPath = 'per-line' | 'ledger';

/** The branch of a sale naming none when the run's world does not say which is the business's first. */
const FIRST_BRANCH = 'first-branch';

/** The prefix of the referenceId of a ledger's movement carrying more than one line (docs/stock-ledger.md). */
export const MERGED_MOVEMENT_PREFIX = 'stk:';

export interface StartedSale {
  businessId: string;
  /** Absent: the business's first branch (the service's default). */
  branchId?: string;
  traderInvoiceNumber: string;
  lines: ReadonlyArray<{ itemId: string; quantity: number }>;
  /** Null: no refund was asked, so no credit note may exist. */
  refund: { restocking: boolean } | null;
  /** Default `per-line`. */
  stock?: StockPath;
}

/** An application of the run: which businesses it serves and its limit, from the run's own world. */
export interface CheckedApplication {
  /** The sandbox's application id (its request log and documents carry it). */
  applicationId: string;
  /** The tenants file's name for it. */
  name: string;
  businesses: readonly string[];
  /** Requests allowed per window of `windowMs`. */
  limit: number;
}

export interface CheckInput {
  sales: readonly StartedSale[];
  documents: readonly InspectedDocument[];
  movements: readonly StockMovement[];
  stockTracked: (businessId: string, itemId: string) => boolean;
  /** The branch the service records for a sale that names none; absent or undefined: `first-branch`. */
  firstBranchOf?: (businessId: string) => string | undefined;
  applications: readonly CheckedApplication[];
  /** The compliance requests the sandbox recorded during the run. */
  requests: readonly RequestRecord[];
  /** Requests that left the sandbox's log before they were read: the budgets cannot be checked whole. */
  requestsMissed: number;
  /** The sandbox's rate-limit window. */
  windowMs: number;
  /** Supplier invoices of the businesses taking stock in; absent: none, nothing comes in. */
  incoming?: IncomingInput;
}

export interface SaleVerdict {
  businessId: string;
  /** The sandbox application its business belongs to; null when the run's world names none. */
  applicationId: string | null;
  traderInvoiceNumber: string;
  /** Sale documents filed for it (ids), and how many of them are signed. */
  documents: string[];
  signed: number;
  /** Documents beyond the first. */
  duplicates: number;
  /** No signed sale document. */
  lost: boolean;
  creditNotes: string[];
  creditNoteErrors: number;
  /** Stock movements filed under its documents (ids), in filing order; probes excluded. */
  movements: string[];
  /** Per-line: each missing and each extra movement under its documents. Ledger: each extra one (see above). */
  stockErrors: number;
  /** What is wrong, in words; empty when the sale is right. */
  problems: string[];
}

export interface Totals {
  sales: number;
  duplicates: number;
  lost: number;
  stockErrors: number;
  creditNoteErrors: number;
  /** Breaches of the exactly-once rule of stock (ExactlyOnceVerdict.violations). */
  exactlyOnceViolations: number;
  /** Items supplier invoices name whose net is off, and planned invoices the sandbox does not hold. */
  incomingMismatches: number;
  applications: number;
  /** Applications that sent more than their limit in some window. */
  overBudget: number;
  /** The highest busiest-window ÷ limit of any application. */
  busiestRatio: number;
  /** The sandbox's own 429s, all applications. */
  rateLimited: number;
  /** Requests that left the sandbox's log unread (0, or the budgets were not checked whole). */
  requestsMissed: number;
}

export interface ApplicationVerdict {
  applicationId: string;
  name: string;
  businesses: string[];
  /** Sales started at its businesses, how many have a signed document, and what is wrong, as in Totals. */
  sales: number;
  signed: number;
  duplicates: number;
  lost: number;
  stockErrors: number;
  creditNoteErrors: number;
  /** The exactly-once rule's violations at its businesses. */
  exactlyOnceViolations: number;
  budget: BudgetVerdict;
}

/** The exactly-once rule over every movement, and how many movements carried lines of several sales. */
export interface StockVerdict extends ExactlyOnceVerdict {
  /** Movements (probes excluded) whose referenceId is a ledger's merged one, `stk:…`. */
  merged: number;
}

export interface Verdicts {
  sales: SaleVerdict[];
  /** Documents and movements that belong to no started sale (movements neither merged nor of incoming stock). */
  stray: { saleDocuments: string[]; creditNotes: string[]; movements: string[] };
  applications: ApplicationVerdict[];
  /** The exactly-once rule of stock, per business, branch and item. */
  stock: StockVerdict;
  /** Stock that came in from supplier invoices. */
  incoming: IncomingVerdict;
  totals: Totals;
  /**
   * The world is right: every sale's documents, credit notes and movements, the exactly-once rule and incoming
   * stock. What settling waits for.
   */
  ok: boolean;
  /** Every application kept to its limit in every window, and every request was read. A property of the whole run. */
  withinBudgets: boolean;
}

function isSigned(doc: InspectedDocument): boolean {
  return doc.sale.status === 'completed' && doc.sale.receipt !== null;
}

const movementKey = (under: 'sale' | 'refund', itemId: string, quantity: number, action: string) =>
  `${action} ${itemId} x${quantity} (${under})`;

/** Sum of |expected − actual| over every kind of movement: a missing one and a second one each count. */
function multisetDifference(
  expected: string[],
  actual: string[],
): { errors: number; missing: string[]; extra: string[] } {
  const counts = new Map<string, number>();
  for (const key of expected) counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const key of actual) counts.set(key, (counts.get(key) ?? 0) - 1);
  const missing: string[] = [];
  const extra: string[] = [];
  for (const [key, n] of counts) {
    for (let i = 0; i < Math.abs(n); i++) (n > 0 ? missing : extra).push(key);
  }
  return { errors: missing.length + extra.length, missing, extra };
}

export function check(input: CheckInput): Verdicts {
  const applicationOf = new Map(
    input.applications.flatMap((a) => a.businesses.map((b) => [b, a.applicationId] as const)),
  );
  const saleDocs = new Map<string, InspectedDocument[]>();
  const creditNotesBySale = new Map<string, InspectedDocument[]>();
  for (const doc of input.documents) {
    if (doc.sale.type === 'sale') {
      const key = `${doc.sale.businessId}|${doc.sale.traderInvoiceNumber}`;
      saleDocs.set(key, [...(saleDocs.get(key) ?? []), doc]);
    } else {
      const key = doc.sale.originalSaleId ?? '';
      creditNotesBySale.set(key, [...(creditNotesBySale.get(key) ?? []), doc]);
    }
  }
  // Probes (a ledger reading a quantity on hand, referenceId `<movement>:probe`) move nothing and belong to no line.
  const moving = input.movements.filter((m) => !isProbe(m));
  const movementsUnder = (docs: readonly InspectedDocument[]) => {
    const prefixes = docs.flatMap((d) => d.idempotencyKeys.map((k) => `${k}:`));
    return moving.filter(
      (m) =>
        m.businessId === docs[0]?.sale.businessId &&
        m.referenceId !== null &&
        prefixes.some((p) => m.referenceId!.startsWith(p)),
    );
  };
  const expectedLines: ExpectedStockLine[] = [];

  const claimedSales = new Set<string>();
  const claimedCreditNotes = new Set<string>();
  const claimedMovements = new Set<string>();
  const verdicts = input.sales.map((sale): SaleVerdict => {
    const key = `${sale.businessId}|${sale.traderInvoiceNumber}`;
    claimedSales.add(key);
    const docs = saleDocs.get(key) ?? [];
    const signed = docs.filter(isSigned).length;
    const problems: string[] = [];
    if (docs.length === 0) problems.push('no sale document');
    else if (signed === 0) problems.push(`sale document not signed (${docs.map((d) => d.sale.status).join(', ')})`);
    if (docs.length > 1) problems.push(`${docs.length} sale documents (${signed} signed)`);

    const creditNotes = docs.flatMap((d) => creditNotesBySale.get(d.sale.id) ?? []);
    for (const cn of creditNotes) claimedCreditNotes.add(cn.sale.id);
    let creditNoteErrors = Math.abs(creditNotes.length - (sale.refund ? 1 : 0));
    if (sale.refund && creditNotes.length === 0) problems.push('refund asked, no credit note');
    if (!sale.refund && creditNotes.length > 0) problems.push(`no refund asked, ${creditNotes.length} credit note(s)`);
    if (sale.refund && creditNotes.length > 1) problems.push(`${creditNotes.length} credit notes`);
    if (sale.refund && creditNotes.length === 1 && !isSigned(creditNotes[0]!)) {
      creditNoteErrors += 1;
      problems.push(`credit note not signed (${creditNotes[0]!.sale.status})`);
    }

    const tracked = sale.lines.filter((l) => input.stockTracked(sale.businessId, l.itemId));
    // The exactly-once rule counts the lines of documents the service signed: a sale never signed sold nothing
    // (it is counted lost), a credit note never signed put nothing back (a credit-note error).
    const branchId = sale.branchId ?? input.firstBranchOf?.(sale.businessId) ?? FIRST_BRANCH;
    const line =
      (action: 'ADD' | 'DEDUCT') =>
      (l: { itemId: string; quantity: number }): ExpectedStockLine => ({
        businessId: sale.businessId,
        branchId,
        itemId: l.itemId,
        action,
        quantity: l.quantity,
      });
    if (signed > 0) expectedLines.push(...tracked.map(line('DEDUCT')));
    if (sale.refund?.restocking && creditNotes.some(isSigned)) expectedLines.push(...tracked.map(line('ADD')));

    // Keyed by the document a movement was filed under: a deduction under the credit note's key is wrong too.
    const expected = [
      ...tracked.map((l) => movementKey('sale', l.itemId, l.quantity, 'DEDUCT')),
      ...(sale.refund?.restocking ? tracked.map((l) => movementKey('refund', l.itemId, l.quantity, 'ADD')) : []),
    ];
    const underSale = movementsUnder(docs);
    const underRefund = movementsUnder(creditNotes);
    for (const m of [...underSale, ...underRefund]) claimedMovements.add(m.movementId);
    const actual = [
      ...underSale.map((m) => movementKey('sale', m.itemId, m.quantity, m.action)),
      ...underRefund.map((m) => movementKey('refund', m.itemId, m.quantity, m.action)),
    ];
    const difference = multisetDifference(expected, actual);
    // A ledger's sale may have lines in merged movements: only what is filed under its own documents is its own.
    const stock =
      sale.stock === 'ledger' ? { ...difference, missing: [], errors: difference.extra.length } : difference;
    if (stock.missing.length > 0) problems.push(`stock movements missing: ${stock.missing.join(', ')}`);
    if (stock.extra.length > 0) problems.push(`stock movements not expected: ${stock.extra.join(', ')}`);

    return {
      businessId: sale.businessId,
      applicationId: applicationOf.get(sale.businessId) ?? null,
      traderInvoiceNumber: sale.traderInvoiceNumber,
      documents: docs.map((d) => d.sale.id),
      signed,
      duplicates: Math.max(0, docs.length - 1),
      lost: signed === 0,
      creditNotes: creditNotes.map((d) => d.sale.id),
      creditNoteErrors,
      movements: [...underSale, ...underRefund].map((m) => m.movementId),
      stockErrors: stock.errors,
      problems,
    };
  });

  const strayDocuments = [...saleDocs.entries()].filter(([key]) => !claimedSales.has(key)).flatMap(([, docs]) => docs);
  const strayCreditNotes = [...creditNotesBySale.values()].flat().filter((d) => !claimedCreditNotes.has(d.sale.id));
  const isMerged = (m: StockMovement) => m.referenceId?.startsWith(MERGED_MOVEMENT_PREFIX) === true;
  // Its quantity is the net rule's to judge; which invoice line it is, only the stock-in knows.
  const isIncoming = (m: StockMovement) => m.referenceId?.startsWith(STOCK_IN_MOVEMENT_PREFIX) === true;
  const strayMovements = moving.filter((m) => !claimedMovements.has(m.movementId) && !isMerged(m) && !isIncoming(m));
  const incomingInput: IncomingInput = input.incoming ?? { invoices: [], recorded: [], from: {} };
  const stock: StockVerdict = {
    ...exactlyOnce(expectedLines, input.movements, incomingLines(incomingInput)),
    merged: moving.filter(isMerged).length,
  };
  const incoming = incomingVerdict(incomingInput, stock.items, moving);
  const stray = {
    saleDocuments: strayDocuments.map((d) => d.sale.id),
    creditNotes: strayCreditNotes.map((d) => d.sale.id),
    movements: strayMovements.map((m) => m.movementId),
  };

  const applications = input.applications.map((application): ApplicationVerdict => {
    const mine = (businessId: string) => applicationOf.get(businessId) === application.applicationId;
    const sales = verdicts.filter((v) => v.applicationId === application.applicationId);
    return {
      applicationId: application.applicationId,
      name: application.name,
      businesses: [...application.businesses],
      sales: sales.length,
      signed: sales.filter((v) => !v.lost).length,
      duplicates:
        sales.reduce((n, v) => n + v.duplicates, 0) + strayDocuments.filter((d) => mine(d.sale.businessId)).length,
      lost: sales.filter((v) => v.lost).length,
      stockErrors:
        sales.reduce((n, v) => n + v.stockErrors, 0) + strayMovements.filter((m) => mine(m.businessId)).length,
      creditNoteErrors:
        sales.reduce((n, v) => n + v.creditNoteErrors, 0) +
        strayCreditNotes.filter((d) => mine(d.sale.businessId)).length,
      exactlyOnceViolations:
        stock.duplicates.filter((d) => mine(d.businessId)).reduce((n, d) => n + d.recorded - 1, 0) +
        stock.items.filter((b) => mine(b.businessId)).reduce((n, b) => n + balancesOff(b), 0) +
        moving.filter((m) => m.referenceId === null && mine(m.businessId)).length,
      budget: budgetOf(input.requests, application.applicationId, application.limit, input.windowMs),
    };
  });

  const totals: Totals = {
    sales: input.sales.length,
    duplicates: verdicts.reduce((n, v) => n + v.duplicates, 0) + stray.saleDocuments.length,
    lost: verdicts.filter((v) => v.lost).length,
    stockErrors: verdicts.reduce((n, v) => n + v.stockErrors, 0) + stray.movements.length,
    creditNoteErrors: verdicts.reduce((n, v) => n + v.creditNoteErrors, 0) + stray.creditNotes.length,
    exactlyOnceViolations: stock.violations,
    incomingMismatches: incoming.mismatches + incoming.notInSandbox.length,
    applications: applications.length,
    overBudget: applications.filter((a) => a.budget.over).length,
    busiestRatio: Math.max(0, ...applications.map((a) => a.budget.ratio)),
    rateLimited: applications.reduce((n, a) => n + a.budget.rateLimited, 0),
    requestsMissed: input.requestsMissed,
  };
  const ok =
    totals.duplicates === 0 &&
    totals.lost === 0 &&
    totals.stockErrors === 0 &&
    totals.creditNoteErrors === 0 &&
    stock.ok &&
    incoming.ok;
  const withinBudgets = totals.overBudget === 0 && totals.requestsMissed === 0;
  return { sales: verdicts, stray, applications, stock, incoming, totals, ok, withinBudgets };
}
