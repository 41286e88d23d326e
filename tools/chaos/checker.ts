/**
 * The independent checker: from what was started (the driver's list) and what the sandbox holds (its inspection
 * API: documents and stock movements), never from workflow state, it says per sale whether the world is right.
 *
 * A document belongs to a sale by business and trader invoice number; a credit note by `originalSaleId`; a stock
 * movement to a document when its `referenceId` starts with an idempotency key the sandbox recorded for that
 * document (the worker's documented convention: `<document key>:<line>:<action>`). Anything that belongs to
 * nothing started is counted too: a stray document is a duplicate, a stray movement a stock error.
 */
import type { InspectedDocument } from '../../sandbox/inspector.js';
import type { StockMovement } from '../../sandbox/compliance/model.js';

export interface StartedSale {
  businessId: string;
  traderInvoiceNumber: string;
  lines: ReadonlyArray<{ itemId: string; quantity: number }>;
  /** Null: no refund was asked, so no credit note may exist. */
  refund: { restocking: boolean } | null;
}

export interface CheckInput {
  sales: readonly StartedSale[];
  documents: readonly InspectedDocument[];
  movements: readonly StockMovement[];
  stockTracked: (businessId: string, itemId: string) => boolean;
}

export interface SaleVerdict {
  businessId: string;
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
  /** Stock movements filed under its documents (ids), in filing order. */
  movements: string[];
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
}

export interface Verdicts {
  sales: SaleVerdict[];
  /** Documents and movements that belong to no started sale. */
  stray: { saleDocuments: string[]; creditNotes: string[]; movements: string[] };
  totals: Totals;
  /** Every expectation holds. */
  ok: boolean;
}

function isSigned(doc: InspectedDocument): boolean {
  return doc.sale.status === 'completed' && doc.sale.receipt !== null;
}

const movementKey = (under: 'sale' | 'refund', itemId: string, quantity: number, action: string) => `${action} ${itemId} x${quantity} (${under})`;

/** Sum of |expected − actual| over every kind of movement: a missing one and a second one each count. */
function multisetDifference(expected: string[], actual: string[]): { errors: number; missing: string[]; extra: string[] } {
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
  const movementsUnder = (docs: readonly InspectedDocument[]) => {
    const prefixes = docs.flatMap((d) => d.idempotencyKeys.map((k) => `${k}:`));
    return input.movements.filter(
      (m) => m.businessId === docs[0]?.sale.businessId && m.referenceId !== null && prefixes.some((p) => m.referenceId!.startsWith(p)),
    );
  };

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

    // Keyed by the document a movement was filed under: a deduction under the credit note's key is wrong too.
    const tracked = sale.lines.filter((l) => input.stockTracked(sale.businessId, l.itemId));
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
    const stock = multisetDifference(expected, actual);
    if (stock.missing.length > 0) problems.push(`stock movements missing: ${stock.missing.join(', ')}`);
    if (stock.extra.length > 0) problems.push(`stock movements not expected: ${stock.extra.join(', ')}`);

    return {
      businessId: sale.businessId,
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

  const stray = {
    saleDocuments: [...saleDocs.entries()].filter(([key]) => !claimedSales.has(key)).flatMap(([, docs]) => docs.map((d) => d.sale.id)),
    creditNotes: [...creditNotesBySale.values()].flat().filter((d) => !claimedCreditNotes.has(d.sale.id)).map((d) => d.sale.id),
    movements: input.movements.filter((m) => !claimedMovements.has(m.movementId)).map((m) => m.movementId),
  };
  const totals: Totals = {
    sales: input.sales.length,
    duplicates: verdicts.reduce((n, v) => n + v.duplicates, 0) + stray.saleDocuments.length,
    lost: verdicts.filter((v) => v.lost).length,
    stockErrors: verdicts.reduce((n, v) => n + v.stockErrors, 0) + stray.movements.length,
    creditNoteErrors: verdicts.reduce((n, v) => n + v.creditNoteErrors, 0) + stray.creditNotes.length,
  };
  const ok = totals.duplicates === 0 && totals.lost === 0 && totals.stockErrors === 0 && totals.creditNoteErrors === 0;
  return { sales: verdicts, stray, totals, ok };
}
