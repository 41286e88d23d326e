import { describe, expect, it } from 'vitest';
import { busiestWindow } from '../../tools/chaos/budget.js';
import { check, type CheckedApplication, type CheckInput, type StartedSale } from '../../tools/chaos/checker.js';
import type { StockMovement } from '../../sandbox/compliance/model.js';
import type { InspectedDocument } from '../../sandbox/inspector.js';
import type { RequestRecord } from '../../sandbox/shared/request-stats.js';

const BIZ = 'biz_demo_nairobi';
const tracked = (_business: string, itemId: string) => itemId !== 'itm_voucher';

/** Three applications as the chaos world has them: one serving two businesses, two serving one each. */
const APPLICATIONS: CheckedApplication[] = [
  { applicationId: 'app_retail', name: 'retail-group', businesses: [BIZ, 'biz_demo_mombasa'], limit: 6 },
  { applicationId: 'app_lakeside', name: 'lakeside', businesses: ['biz_kisumu'], limit: 3 },
  { applicationId: 'app_highlands', name: 'highlands', businesses: ['biz_eldoret'], limit: 3 },
];
const WINDOW_MS = 1_000;

/** The checker's input with no applications' requests: the world alone. */
function input(world: Pick<CheckInput, 'sales' | 'documents' | 'movements'> & Partial<CheckInput>): CheckInput {
  return {
    stockTracked: tracked,
    applications: APPLICATIONS,
    requests: [],
    requestsMissed: 0,
    windowMs: WINDOW_MS,
    ...world,
  };
}

let ids = 0;
/** A sandbox document as the inspection API shows it, with only the fields the checker reads filled in. */
function doc(over: {
  type?: 'sale' | 'credit_note';
  tin: string;
  status?: 'completed' | 'failed' | 'pending';
  key: string;
  originalSaleId?: string;
  businessId?: string;
}): InspectedDocument {
  const status = over.status ?? 'completed';
  const id = `${over.type === 'credit_note' ? 'crn' : 'sal'}_${++ids}`;
  return {
    sale: {
      id,
      type: over.type ?? 'sale',
      status,
      traderInvoiceNumber: over.tin,
      receipt:
        status === 'completed' ? ({ receiptNumber: ids } as unknown as InspectedDocument['sale']['receipt']) : null,
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

function movement(
  referenceId: string,
  itemId: string,
  quantity: number,
  action: 'ADD' | 'DEDUCT',
  businessId = BIZ,
): StockMovement {
  return {
    movementId: `mov_${++ids}`,
    businessId,
    branchId: 'br',
    itemId,
    action,
    quantity,
    unitPrice: 1,
    referenceId,
    quantityBefore: 10,
    quantityOnHand: 9,
    at: '',
  };
}

const sale = (tin: string, refund: StartedSale['refund'] = null, businessId = BIZ): StartedSale => ({
  businessId,
  branchId: 'br',
  traderInvoiceNumber: tin,
  lines: [
    { itemId: 'itm_sugar', quantity: 2 },
    { itemId: 'itm_voucher', quantity: 1 },
    { itemId: 'itm_milk', quantity: 1 },
  ],
  refund,
});

/** A world where the sale (and its refund, when asked) went exactly right. */
function rightWorld(tin: string, refund: StartedSale['refund'] = null, businessId = BIZ) {
  const s = doc({ tin, key: `sale-v1:${tin}`, businessId });
  const documents = [s];
  const movements = [
    movement(`sale-v1:${tin}:0:DEDUCT`, 'itm_sugar', 2, 'DEDUCT', businessId),
    movement(`sale-v1:${tin}:1:DEDUCT`, 'itm_milk', 1, 'DEDUCT', businessId),
  ];
  if (refund) {
    documents.push(
      doc({ type: 'credit_note', tin: `CN-${tin}`, key: `cn-v1:${tin}`, originalSaleId: s.sale.id, businessId }),
    );
    if (refund.restocking)
      movements.push(
        movement(`cn-v1:${tin}:0:ADD`, 'itm_sugar', 2, 'ADD', businessId),
        movement(`cn-v1:${tin}:1:ADD`, 'itm_milk', 1, 'ADD', businessId),
      );
  }
  return { documents, movements };
}

describe('the chaos checker', () => {
  it('finds nothing wrong when every sale has one signed document, its credit note and its movements', () => {
    const a = rightWorld('A');
    const b = rightWorld('B', { restocking: true });
    const c = rightWorld('C', { restocking: false });
    const verdicts = check(
      input({
        sales: [sale('A'), sale('B', { restocking: true }), sale('C', { restocking: false })],
        documents: [...a.documents, ...b.documents, ...c.documents],
        movements: [...a.movements, ...b.movements, ...c.movements],
      }),
    );
    expect(verdicts.totals).toEqual({
      sales: 3,
      duplicates: 0,
      lost: 0,
      stockErrors: 0,
      creditNoteErrors: 0,
      exactlyOnceViolations: 0,
      incomingMismatches: 0,
      applications: 3,
      overBudget: 0,
      busiestRatio: 0,
      rateLimited: 0,
      requestsMissed: 0,
    });
    expect(verdicts.ok).toBe(true);
    expect(verdicts.withinBudgets).toBe(true);
    expect(verdicts.sales.every((v) => v.problems.length === 0)).toBe(true);
    expect(verdicts.stray).toEqual({ saleDocuments: [], creditNotes: [], movements: [] });
  });

  it('counts a second document for the same business and trader invoice number as a duplicate', () => {
    const world = rightWorld('A');
    const verdicts = check(
      input({
        sales: [sale('A')],
        documents: [...world.documents, doc({ tin: 'A', key: 'other-key', status: 'failed' })],
        movements: world.movements,
      }),
    );
    expect(verdicts.totals.duplicates).toBe(1);
    expect(verdicts.ok).toBe(false);
    expect(verdicts.sales[0]!.problems).toContain('2 sale documents (1 signed)');
    // The same number at another business is another sale, not a duplicate.
    const elsewhere = check(
      input({
        sales: [sale('A')],
        documents: [...world.documents, doc({ tin: 'A', key: 'k2', businessId: 'biz_demo_mombasa' })],
        movements: world.movements,
      }),
    );
    expect(elsewhere.sales[0]!.duplicates).toBe(0);
    expect(elsewhere.stray.saleDocuments).toHaveLength(1);
    expect(elsewhere.totals.duplicates).toBe(1);
  });

  it('counts a sale without a signed document as lost', () => {
    const verdicts = check(
      input({
        sales: [sale('A'), sale('B')],
        documents: [doc({ tin: 'B', key: 'kb', status: 'failed' })],
        movements: [],
      }),
    );
    expect(verdicts.totals.lost).toBe(2);
    expect(verdicts.sales.map((v) => v.problems[0])).toEqual(['no sale document', 'sale document not signed (failed)']);
  });

  it('counts a missing, a second and a misplaced stock movement as stock errors', () => {
    const world = rightWorld('A', { restocking: true });
    const [deductSugar, , addSugar] = world.movements;
    const second = movement(deductSugar!.referenceId!, 'itm_sugar', 2, 'DEDUCT');
    const untracked = movement('sale-v1:A:1:DEDUCT', 'itm_voucher', 1, 'DEDUCT');
    const verdicts = check(
      input({
        sales: [sale('A', { restocking: true })],
        documents: world.documents,
        // Milk's deduction is missing, sugar's is there twice, the voucher moved though it is not tracked, milk's restock missing.
        movements: [deductSugar!, second, untracked, addSugar!],
      }),
    );
    expect(verdicts.sales[0]!.stockErrors).toBe(4);
    expect(verdicts.totals.stockErrors).toBe(4);
    expect(verdicts.sales[0]!.problems.join('; ')).toMatch(
      /missing: .*DEDUCT itm_milk x1 \(sale\).*ADD itm_milk x1 \(refund\)/,
    );
  });

  it('counts a restock of a refund that does not restock, and a movement of no started sale', () => {
    const world = rightWorld('A', { restocking: true });
    const verdicts = check(
      input({
        sales: [sale('A', { restocking: false })],
        documents: world.documents,
        movements: [...world.movements, movement('unknown-key:0:DEDUCT', 'itm_sugar', 1, 'DEDUCT')],
      }),
    );
    expect(verdicts.sales[0]!.stockErrors).toBe(2);
    expect(verdicts.stray.movements).toHaveLength(1);
    expect(verdicts.totals.stockErrors).toBe(3);
  });

  it('counts a missing, a second, an unsigned or an unasked-for credit note as credit-note errors', () => {
    const refunded = rightWorld('A', { restocking: false });
    const saleId = refunded.documents[0]!.sale.id;
    const second = doc({ type: 'credit_note', tin: 'CN-A2', key: 'cn-v1:A2', originalSaleId: saleId });
    const two = check(
      input({
        sales: [sale('A', { restocking: false })],
        documents: [...refunded.documents, second],
        movements: refunded.movements,
      }),
    );
    expect(two.totals.creditNoteErrors).toBe(1);

    const none = check(
      input({
        sales: [sale('A', { restocking: false })],
        documents: [refunded.documents[0]!],
        movements: refunded.movements,
      }),
    );
    expect(none.totals.creditNoteErrors).toBe(1);
    expect(none.sales[0]!.problems).toContain('refund asked, no credit note');

    const unsigned = doc({
      type: 'credit_note',
      tin: 'CN-A',
      key: 'cn-v1:A',
      originalSaleId: saleId,
      status: 'failed',
    });
    const failed = check(
      input({
        sales: [sale('A', { restocking: false })],
        documents: [refunded.documents[0]!, unsigned],
        movements: refunded.movements,
      }),
    );
    expect(failed.totals.creditNoteErrors).toBe(1);

    const unasked = check(input({ sales: [sale('A')], documents: refunded.documents, movements: refunded.movements }));
    expect(unasked.totals.creditNoteErrors).toBe(1);
    expect(unasked.sales[0]!.problems).toContain('no refund asked, 1 credit note(s)');

    const orphan = check(
      input({
        sales: [sale('B')],
        documents: [
          ...rightWorld('B').documents,
          doc({ type: 'credit_note', tin: 'CN-X', key: 'cn-x', originalSaleId: 'sal_unknown' }),
        ],
        movements: rightWorld('B').movements,
      }),
    );
    expect(orphan.stray.creditNotes).toHaveLength(1);
    expect(orphan.totals.creditNoteErrors).toBe(1);
  });
});

/** A request as the sandbox's log records it; `applicationId` absent: answered by a fault before the key was read. */
function request(at: number, applicationId: string | undefined, status = 200): RequestRecord {
  return {
    at,
    service: 'compliance',
    method: 'GET',
    route: '/v1/sales/:id',
    path: '/v1/sales/x',
    status,
    ...(applicationId ? { applicationId } : {}),
  };
}

describe('the chaos checker, per application', () => {
  /** One right sale at each of the four businesses. */
  const everywhere = () => {
    const worlds = [
      rightWorld('N', null, BIZ),
      rightWorld('M', null, 'biz_demo_mombasa'),
      rightWorld('K', null, 'biz_kisumu'),
      rightWorld('E', null, 'biz_eldoret'),
    ];
    return {
      sales: [
        sale('N', null, BIZ),
        sale('M', null, 'biz_demo_mombasa'),
        sale('K', null, 'biz_kisumu'),
        sale('E', null, 'biz_eldoret'),
      ],
      documents: worlds.flatMap((w) => w.documents),
      movements: worlds.flatMap((w) => w.movements),
    };
  };

  it('groups the sales by the application of their business', () => {
    const verdicts = check(input(everywhere()));
    expect(verdicts.ok).toBe(true);
    expect(verdicts.applications.map((a) => [a.name, a.sales, a.signed, a.duplicates, a.lost])).toEqual([
      ['retail-group', 2, 2, 0, 0],
      ['lakeside', 1, 1, 0, 0],
      ['highlands', 1, 1, 0, 0],
    ]);
    expect(verdicts.sales.map((v) => v.applicationId)).toEqual([
      'app_retail',
      'app_retail',
      'app_lakeside',
      'app_highlands',
    ]);
  });

  it('fails when one application files a duplicate, and names that application alone', () => {
    const world = everywhere();
    const verdicts = check(
      input({
        ...world,
        documents: [...world.documents, doc({ tin: 'K', key: 'second-key', businessId: 'biz_kisumu' })],
      }),
    );
    expect(verdicts.ok).toBe(false);
    expect(verdicts.totals.duplicates).toBe(1);
    expect(verdicts.applications.map((a) => [a.name, a.duplicates])).toEqual([
      ['retail-group', 0],
      ['lakeside', 1],
      ['highlands', 0],
    ]);
    // A stray document (of no started sale) counts against the application of its business.
    const stray = check(
      input({
        ...world,
        documents: [...world.documents, doc({ tin: 'NOT-STARTED', key: 'k-stray', businessId: 'biz_eldoret' })],
      }),
    );
    expect(stray.ok).toBe(false);
    expect(stray.applications.find((a) => a.name === 'highlands')!.duplicates).toBe(1);
    // A sale lost at one application is that application's.
    const lost = check(
      input({ ...world, documents: world.documents.filter((d) => d.sale.traderInvoiceNumber !== 'M') }),
    );
    expect(lost.applications.map((a) => a.lost)).toEqual([1, 0, 0]);
    expect(lost.applications[0]!.signed).toBe(1);
  });

  it("fails when one application's requests exceed its limit in some window, even across two of the sandbox's fixed windows", () => {
    // lakeside's limit is 3 a second. 3 at the end of one second and 3 at the start of the next: each fixed window
    // holds 3, but 6 fall within one second.
    const requests = [
      ...[0, 400, 800].map((at) => request(at, 'app_retail')),
      ...[700, 800, 900, 1_100, 1_200, 1_300].map((at) => request(at, 'app_lakeside')),
      ...[0, 1_000, 2_000].map((at) => request(at, 'app_highlands')),
    ];
    const verdicts = check(input({ ...everywhere(), requests }));
    expect(verdicts.ok).toBe(true);
    expect(verdicts.withinBudgets).toBe(false);
    expect(verdicts.totals.overBudget).toBe(1);
    expect(verdicts.totals.busiestRatio).toBe(2);
    const [retail, lakeside, highlands] = verdicts.applications;
    expect(lakeside!.budget).toMatchObject({
      limit: 3,
      requests: 6,
      busiestWindow: { requests: 6, startedAt: new Date(700).toISOString() },
      ratio: 2,
      over: true,
    });
    expect(retail!.budget).toMatchObject({ requests: 3, busiestWindow: { requests: 3 }, ratio: 0.5, over: false });
    // Exactly the limit in a window, each a second apart: within budget.
    expect(highlands!.budget).toMatchObject({ busiestWindow: { requests: 1 }, over: false });
  });

  it("counts the sandbox's 429s apart, and leaves requests a fault answered before the key was read to no application", () => {
    const requests = [
      ...[0, 100, 200].map((at) => request(at, 'app_lakeside')),
      // Refused by the sandbox for lakeside's own window: not counted against it, reported.
      ...[300, 400].map((at) => request(at, 'app_lakeside', 429)),
      // A storm's 429 and a 503 before the key check: no application.
      request(500, undefined, 429),
      request(600, undefined, 503),
    ];
    const verdicts = check(input({ ...everywhere(), requests }));
    expect(verdicts.withinBudgets).toBe(true);
    expect(verdicts.applications[1]!.budget).toMatchObject({
      requests: 3,
      rateLimited: 2,
      busiestWindow: { requests: 3 },
      ratio: 1,
      over: false,
    });
    expect(verdicts.totals.rateLimited).toBe(2);
    expect(verdicts.applications[0]!.budget.requests).toBe(0);
  });

  it('does not call the budgets kept when some requests left the log unread', () => {
    const verdicts = check(input({ ...everywhere(), requestsMissed: 5 }));
    expect(verdicts.ok).toBe(true);
    expect(verdicts.withinBudgets).toBe(false);
    expect(verdicts.totals.requestsMissed).toBe(5);
  });

  it('finds the busiest window wherever it starts', () => {
    expect(busiestWindow([], 1_000)).toEqual({ count: 0, startedAt: null });
    expect(busiestWindow([5_000, 0, 999, 1_000, 1_001, 1_998], 1_000)).toEqual({ count: 4, startedAt: 999 });
    // The window is half open: a request exactly one window later starts the next.
    expect(busiestWindow([0, 1_000, 2_000], 1_000).count).toBe(1);
  });
});
