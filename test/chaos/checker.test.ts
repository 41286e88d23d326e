import { describe, expect, it } from 'vitest';
import { check, type StartedSale } from '../../tools/chaos/checker.js';
import type { StockMovement } from '../../sandbox/compliance/model.js';
import type { InspectedDocument } from '../../sandbox/inspector.js';

const BIZ = 'biz_demo_nairobi';
const tracked = (_business: string, itemId: string) => itemId !== 'itm_voucher';

let ids = 0;
/** A sandbox document as the inspection API shows it, with only the fields the checker reads filled in. */
function doc(over: { type?: 'sale' | 'credit_note'; tin: string; status?: 'completed' | 'failed' | 'pending'; key: string; originalSaleId?: string; businessId?: string }): InspectedDocument {
  const status = over.status ?? 'completed';
  const id = `${over.type === 'credit_note' ? 'crn' : 'sal'}_${++ids}`;
  return {
    sale: {
      id,
      type: over.type ?? 'sale',
      status,
      traderInvoiceNumber: over.tin,
      receipt: status === 'completed' ? ({ receiptNumber: ids } as unknown as InspectedDocument['sale']['receipt']) : null,
      originalSaleId: over.originalSaleId ?? null,
      businessId: over.businessId ?? BIZ,
    } as InspectedDocument['sale'],
    applicationId: 'app_demo_retail',
    idempotencyKeys: [over.key],
    submissions: 1,
    causes: [],
    history: [],
    creditNoteId: null,
  };
}

function movement(referenceId: string, itemId: string, quantity: number, action: 'ADD' | 'DEDUCT', businessId = BIZ): StockMovement {
  return { movementId: `mov_${++ids}`, businessId, branchId: 'br', itemId, action, quantity, unitPrice: 1, referenceId, quantityBefore: 10, quantityOnHand: 9, at: '' };
}

const sale = (tin: string, refund: StartedSale['refund'] = null): StartedSale => ({
  businessId: BIZ,
  traderInvoiceNumber: tin,
  lines: [
    { itemId: 'itm_sugar', quantity: 2 },
    { itemId: 'itm_voucher', quantity: 1 },
    { itemId: 'itm_milk', quantity: 1 },
  ],
  refund,
});

/** A world where the sale (and its refund, when asked) went exactly right. */
function rightWorld(tin: string, refund: StartedSale['refund'] = null) {
  const s = doc({ tin, key: `sale-v1:${tin}` });
  const documents = [s];
  const movements = [movement(`sale-v1:${tin}:0:DEDUCT`, 'itm_sugar', 2, 'DEDUCT'), movement(`sale-v1:${tin}:1:DEDUCT`, 'itm_milk', 1, 'DEDUCT')];
  if (refund) {
    documents.push(doc({ type: 'credit_note', tin: `CN-${tin}`, key: `cn-v1:${tin}`, originalSaleId: s.sale.id }));
    if (refund.restocking) movements.push(movement(`cn-v1:${tin}:0:ADD`, 'itm_sugar', 2, 'ADD'), movement(`cn-v1:${tin}:1:ADD`, 'itm_milk', 1, 'ADD'));
  }
  return { documents, movements };
}

describe('the chaos checker', () => {
  it('finds nothing wrong when every sale has one signed document, its credit note and its movements', () => {
    const a = rightWorld('A');
    const b = rightWorld('B', { restocking: true });
    const c = rightWorld('C', { restocking: false });
    const verdicts = check({
      sales: [sale('A'), sale('B', { restocking: true }), sale('C', { restocking: false })],
      documents: [...a.documents, ...b.documents, ...c.documents],
      movements: [...a.movements, ...b.movements, ...c.movements],
      stockTracked: tracked,
    });
    expect(verdicts.totals).toEqual({ sales: 3, duplicates: 0, lost: 0, stockErrors: 0, creditNoteErrors: 0 });
    expect(verdicts.ok).toBe(true);
    expect(verdicts.sales.every((v) => v.problems.length === 0)).toBe(true);
    expect(verdicts.stray).toEqual({ saleDocuments: [], creditNotes: [], movements: [] });
  });

  it('counts a second document for the same business and trader invoice number as a duplicate', () => {
    const world = rightWorld('A');
    const verdicts = check({ sales: [sale('A')], documents: [...world.documents, doc({ tin: 'A', key: 'other-key', status: 'failed' })], movements: world.movements, stockTracked: tracked });
    expect(verdicts.totals.duplicates).toBe(1);
    expect(verdicts.ok).toBe(false);
    expect(verdicts.sales[0]!.problems).toContain('2 sale documents (1 signed)');
    // The same number at another business is another sale, not a duplicate.
    const elsewhere = check({ sales: [sale('A')], documents: [...world.documents, doc({ tin: 'A', key: 'k2', businessId: 'biz_demo_mombasa' })], movements: world.movements, stockTracked: tracked });
    expect(elsewhere.sales[0]!.duplicates).toBe(0);
    expect(elsewhere.stray.saleDocuments).toHaveLength(1);
    expect(elsewhere.totals.duplicates).toBe(1);
  });

  it('counts a sale without a signed document as lost', () => {
    const verdicts = check({ sales: [sale('A'), sale('B')], documents: [doc({ tin: 'B', key: 'kb', status: 'failed' })], movements: [], stockTracked: tracked });
    expect(verdicts.totals.lost).toBe(2);
    expect(verdicts.sales.map((v) => v.problems[0])).toEqual(['no sale document', 'sale document not signed (failed)']);
  });

  it('counts a missing, a second and a misplaced stock movement as stock errors', () => {
    const world = rightWorld('A', { restocking: true });
    const [deductSugar, , addSugar] = world.movements;
    const second = movement(deductSugar!.referenceId!, 'itm_sugar', 2, 'DEDUCT');
    const untracked = movement('sale-v1:A:1:DEDUCT', 'itm_voucher', 1, 'DEDUCT');
    const verdicts = check({
      sales: [sale('A', { restocking: true })],
      documents: world.documents,
      // Milk's deduction is missing, sugar's is there twice, the voucher moved though it is not tracked, milk's restock missing.
      movements: [deductSugar!, second, untracked, addSugar!],
      stockTracked: tracked,
    });
    expect(verdicts.sales[0]!.stockErrors).toBe(4);
    expect(verdicts.totals.stockErrors).toBe(4);
    expect(verdicts.sales[0]!.problems.join('; ')).toMatch(/missing: .*DEDUCT itm_milk x1 \(sale\).*ADD itm_milk x1 \(refund\)/);
  });

  it('counts a restock of a refund that does not restock, and a movement of no started sale', () => {
    const world = rightWorld('A', { restocking: true });
    const verdicts = check({
      sales: [sale('A', { restocking: false })],
      documents: world.documents,
      movements: [...world.movements, movement('unknown-key:0:DEDUCT', 'itm_sugar', 1, 'DEDUCT')],
      stockTracked: tracked,
    });
    expect(verdicts.sales[0]!.stockErrors).toBe(2);
    expect(verdicts.stray.movements).toHaveLength(1);
    expect(verdicts.totals.stockErrors).toBe(3);
  });

  it('counts a missing, a second, an unsigned or an unasked-for credit note as credit-note errors', () => {
    const refunded = rightWorld('A', { restocking: false });
    const saleId = refunded.documents[0]!.sale.id;
    const second = doc({ type: 'credit_note', tin: 'CN-A2', key: 'cn-v1:A2', originalSaleId: saleId });
    const two = check({ sales: [sale('A', { restocking: false })], documents: [...refunded.documents, second], movements: refunded.movements, stockTracked: tracked });
    expect(two.totals.creditNoteErrors).toBe(1);

    const none = check({ sales: [sale('A', { restocking: false })], documents: [refunded.documents[0]!], movements: refunded.movements, stockTracked: tracked });
    expect(none.totals.creditNoteErrors).toBe(1);
    expect(none.sales[0]!.problems).toContain('refund asked, no credit note');

    const unsigned = doc({ type: 'credit_note', tin: 'CN-A', key: 'cn-v1:A', originalSaleId: saleId, status: 'failed' });
    const failed = check({ sales: [sale('A', { restocking: false })], documents: [refunded.documents[0]!, unsigned], movements: refunded.movements, stockTracked: tracked });
    expect(failed.totals.creditNoteErrors).toBe(1);

    const unasked = check({ sales: [sale('A')], documents: refunded.documents, movements: refunded.movements, stockTracked: tracked });
    expect(unasked.totals.creditNoteErrors).toBe(1);
    expect(unasked.sales[0]!.problems).toContain('no refund asked, 1 credit note(s)');

    const orphan = check({ sales: [sale('B')], documents: [...rightWorld('B').documents, doc({ type: 'credit_note', tin: 'CN-X', key: 'cn-x', originalSaleId: 'sal_unknown' })], movements: rightWorld('B').movements, stockTracked: tracked });
    expect(orphan.stray.creditNotes).toHaveLength(1);
    expect(orphan.totals.creditNoteErrors).toBe(1);
  });
});
