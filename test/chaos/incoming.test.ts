import { describe, expect, it } from 'vitest';
import { check, type CheckedApplication, type CheckInput, type StartedSale } from '../../tools/chaos/checker.js';
import type { IncomingInput, IncomingInvoice } from '../../tools/chaos/incoming.js';
import type { StockMovement } from '../../sandbox/compliance/model.js';
import type { InspectedDocument } from '../../sandbox/inspector.js';

const BIZ = 'biz_demo_nairobi';
const PLAIN = 'biz_demo_mombasa';
const BRANCH = 'br_cbd';
const FROM = '2026-04-01';
const APPLICATIONS: CheckedApplication[] = [
  { applicationId: 'app_retail', name: 'retail-group', businesses: [BIZ, PLAIN], limit: 100 },
];

let ids = 0;
function doc(
  tin: string,
  key: string,
  over: { type?: 'credit_note'; originalSaleId?: string } = {},
): InspectedDocument {
  return {
    sale: {
      id: `${over.type === 'credit_note' ? 'crn' : 'sal'}_${++ids}`,
      type: over.type ?? 'sale',
      status: 'completed',
      traderInvoiceNumber: tin,
      receipt: { receiptNumber: ids } as unknown as InspectedDocument['sale']['receipt'],
      originalSaleId: over.originalSaleId ?? null,
      businessId: BIZ,
    } as InspectedDocument['sale'],
    applicationId: 'app_retail',
    idempotencyKeys: [key],
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
    branchId: BRANCH,
    itemId,
    action,
    quantity,
    unitPrice: 10,
    referenceId,
    quantityBefore: 1_000_000,
    quantityOnHand: 1_000_000,
    at: '',
  };
}

const sale = (tin: string, over: Partial<StartedSale> = {}): StartedSale => ({
  businessId: BIZ,
  branchId: BRANCH,
  traderInvoiceNumber: tin,
  lines: [
    { itemId: 'itm_sugar', quantity: 2 },
    { itemId: 'itm_milk', quantity: 1 },
  ],
  refund: null,
  stock: 'ledger',
  ...over,
});

const invoice = (purchaseId: string, invoiceDate: string, lines: IncomingInvoice['lines']): IncomingInvoice => ({
  businessId: BIZ,
  branchId: BRANCH,
  purchaseId,
  invoiceDate,
  lines,
});

/**
 * Four supplier invoices at one branch of a business taking stock in from FROM:
 * - CONF, confirmed once: sugar 5 and sugar 3 (one line on the start date itself);
 * - RECONF, confirmed, taken back, confirmed again: milk 4;
 * - REJ, confirmed, then rejected: sugar 2;
 * - EARLY, dated before the start date, confirmed: milk 7, which adds nothing.
 */
const INVOICES: IncomingInvoice[] = [
  invoice('CONF', FROM, [
    { itemId: 'itm_sugar', quantity: 5 },
    { itemId: 'itm_sugar', quantity: 3 },
  ]),
  invoice('RECONF', '2026-04-10', [{ itemId: 'itm_milk', quantity: 4 }]),
  invoice('REJ', '2026-04-12', [{ itemId: 'itm_sugar', quantity: 2 }]),
  invoice('EARLY', '2026-03-25', [{ itemId: 'itm_milk', quantity: 7 }]),
];
const FINAL = { CONF: 'confirmed', RECONF: 'confirmed', REJ: 'rejected', EARLY: 'confirmed' } as const;

function incoming(status: Partial<Record<string, string>> = FINAL, invoices = INVOICES): IncomingInput {
  return {
    invoices,
    recorded: invoices.flatMap((i) =>
      status[i.purchaseId] === undefined
        ? []
        : [{ businessId: i.businessId, purchase: { id: i.purchaseId, status: status[i.purchaseId]! } }],
    ),
    from: { [BIZ]: FROM },
  };
}

/**
 * Sales A and B (sugar 2, milk 1 each), B refunded with restock, and the stock-in's lines through the same ledger:
 * CONF's two sugar lines alone, RECONF's milk added, its take-back merged with A's and B's milk, added again; REJ's
 * sugar added, and its take-back merged with the sales' sugar. EARLY moved nothing.
 */
function world(): Pick<CheckInput, 'sales' | 'documents' | 'movements'> {
  const a = doc('A', 'sale-v1:A');
  const b = doc('B', 'sale-v1:B');
  const cn = doc('CN-B', 'cn-v1:B', { type: 'credit_note', originalSaleId: b.sale.id });
  return {
    sales: [sale('A'), sale('B', { refund: { restocking: true } })],
    documents: [a, b, cn],
    movements: [
      movement('sin-v1:conf-0-1-add', 'itm_sugar', 5, 'ADD'),
      movement('sin-v1:conf-1-1-add', 'itm_sugar', 3, 'ADD'),
      movement('sin-v1:reconf-0-1-add', 'itm_milk', 4, 'ADD'),
      // A's and B's milk (1 + 1) with RECONF's take-back (4).
      movement('stk:ledger:1', 'itm_milk', 6, 'DEDUCT'),
      movement('sin-v1:reconf-0-2-add', 'itm_milk', 4, 'ADD'),
      movement('sin-v1:rej-0-1-add', 'itm_sugar', 2, 'ADD'),
      // A's and B's sugar (2 + 2) with REJ's take-back (2).
      movement('stk:ledger:2', 'itm_sugar', 6, 'DEDUCT'),
      movement('cn-v1:B:0:ADD', 'itm_sugar', 2, 'ADD'),
      movement('cn-v1:B:1:ADD', 'itm_milk', 1, 'ADD'),
      movement('stk:ledger:2:probe', 'itm_sugar', 0, 'ADD'),
    ],
  };
}

function input(over: Pick<CheckInput, 'sales' | 'documents' | 'movements'>, with_ = incoming()): CheckInput {
  return {
    stockTracked: () => true,
    applications: APPLICATIONS,
    requests: [],
    requestsMissed: 0,
    windowMs: 60_000,
    incoming: with_,
    ...over,
  };
}

const item = (v: ReturnType<typeof check>, itemId: string, businessId = BIZ) =>
  v.stock.items.find((i) => i.itemId === itemId && i.businessId === businessId)!;

describe('incoming stock, in the chaos checker', () => {
  it('judges an item supplier invoices name by its net: restocked − sold + the lines of invoices confirmed at last', () => {
    const v = check(input(world()));
    expect(v.ok).toBe(true);
    expect(v.totals).toMatchObject({ exactlyOnceViolations: 0, incomingMismatches: 0, stockErrors: 0 });
    // The stock-in's own movements are claimed by incoming stock, not stray.
    expect(v.stray.movements).toEqual([]);
    // Sugar: 2 restocked − 4 sold + 8 (CONF; REJ counts nothing) = 6 = 12 added − 6 deducted.
    expect(item(v, 'itm_sugar')).toMatchObject({
      net: true,
      sold: 4,
      deducted: 6,
      restocked: 2,
      added: 12,
      incomingLines: 2,
      incoming: 8,
      missing: { deduct: 0, add: 0, net: 0 },
      extra: { deduct: 0, add: 0, net: 0 },
    });
    // Milk: the separate equalities would fail (6 deducted for 2 sold), its net holds: 1 − 2 + 4 = 9 − 6.
    expect(item(v, 'itm_milk')).toMatchObject({ net: true, sold: 2, deducted: 6, added: 9, incoming: 4 });
    expect(v.incoming).toEqual({
      invoices: 4,
      counted: 2,
      lines: 3,
      expectedQuantity: 12,
      recordedQuantity: 12,
      // RECONF's and REJ's take-backs went merged with the sales' lines.
      movements: { add: 5, deduct: 0 },
      mismatches: 0,
      notInSandbox: [],
      ok: true,
    });
  });

  it('keeps the separate DEDUCT and ADD equalities for items no invoice names', () => {
    const w = world();
    // Oil, named by no invoice: one DEDUCT of 3 too many and one ADD of 3 too many net out, and are two violations.
    const movements = [
      ...w.movements,
      movement('stk:ledger:3', 'itm_oil', 3, 'DEDUCT'),
      movement('stk:ledger:4', 'itm_oil', 3, 'ADD'),
    ];
    const v = check(input({ ...w, movements }));
    expect(item(v, 'itm_oil')).toMatchObject({ net: false, extra: { deduct: 3, add: 3, net: 0 } });
    expect(v.totals.exactlyOnceViolations).toBe(2);
    expect(v.incoming.ok).toBe(true);
    expect(v.ok).toBe(false);
    // The same two movements on an item an invoice names cancel out in its net.
    const onMilk = check(
      input({
        ...w,
        movements: [
          ...w.movements,
          movement('stk:ledger:3', 'itm_milk', 3, 'DEDUCT'),
          movement('stk:ledger:4', 'itm_milk', 3, 'ADD'),
        ],
      }),
    );
    expect(onMilk.ok).toBe(true);
  });

  it('finds an invoice dated before the start date that added, and a rejection never taken back', () => {
    const w = world();
    const early = check(
      input({ ...w, movements: [...w.movements, movement('sin-v1:early-0-1-add', 'itm_milk', 7, 'ADD')] }),
    );
    expect(early.ok).toBe(false);
    expect(item(early, 'itm_milk').extra).toEqual({ deduct: 0, add: 0, net: 7 });
    expect(early.incoming).toMatchObject({ recordedQuantity: 19, expectedQuantity: 12, mismatches: 1, ok: false });
    expect(early.totals).toMatchObject({ incomingMismatches: 1, exactlyOnceViolations: 1 });
    expect(early.applications[0]!.exactlyOnceViolations).toBe(1);

    // REJ's take-back never recorded: the merged sugar deduction carried the sales' 4 alone.
    const movements = w.movements.map((m) => (m.referenceId === 'stk:ledger:2' ? { ...m, quantity: 4 } : m));
    const rejected = check(input({ ...w, movements }));
    expect(item(rejected, 'itm_sugar').extra.net).toBe(2);
    expect(rejected.incoming.mismatches).toBe(1);
  });

  it('counts what a confirmed invoice has not added yet as missing, and nothing of an invoice no longer confirmed', () => {
    const w = world();
    // The second confirmation of RECONF not recorded yet.
    const movements = w.movements.filter((m) => m.referenceId !== 'sin-v1:reconf-0-2-add');
    const v = check(input({ ...w, movements }));
    expect(item(v, 'itm_milk').missing.net).toBe(4);
    expect(v.stock.missingQuantity).toBe(4);
    expect(v.incoming).toMatchObject({ expectedQuantity: 12, recordedQuantity: 8, mismatches: 1 });
    // Had RECONF ended in pending_review, the same movements would be right.
    const back = check(input({ ...w, movements }, incoming({ ...FINAL, RECONF: 'pending_review' })));
    expect(back.ok).toBe(true);
    expect(back.incoming).toMatchObject({ counted: 1, lines: 2, expectedQuantity: 8, recordedQuantity: 8 });
  });

  it('counts a planned invoice the sandbox does not hold', () => {
    const { CONF: _left, ...rest } = FINAL;
    const v = check(input(world(), incoming(rest)));
    expect(v.incoming.notInSandbox).toEqual(['CONF']);
    expect(v.totals.incomingMismatches).toBeGreaterThanOrEqual(1);
    expect(v.ok).toBe(false);
  });

  it('keeps the separate equalities for an item only an invoice before the start date or at another business names', () => {
    // Oil only on an invoice dated before the start date, added and taken back: nothing may move it at all.
    const early = invoice('EARLY-OIL', '2026-03-30', [{ itemId: 'itm_oil', quantity: 6 }]);
    const w = world();
    const movements = [
      ...w.movements,
      movement('sin-v1:early-oil-0-1-add', 'itm_oil', 6, 'ADD'),
      movement('sin-v1:early-oil-0-1-back', 'itm_oil', 6, 'DEDUCT'),
    ];
    const v = check(input({ ...w, movements }, incoming({ ...FINAL, 'EARLY-OIL': 'rejected' }, [...INVOICES, early])));
    expect(item(v, 'itm_oil')).toMatchObject({ net: false, extra: { deduct: 6, add: 6, net: 0 } });
    expect(v.totals.exactlyOnceViolations).toBe(2);
    expect(v.incoming).toMatchObject({ invoices: 5, mismatches: 0, ok: true });
    expect(v.ok).toBe(false);

    // A business not taking stock in: its invoice counts nothing, and a stock-in movement there is an extra ADD.
    const plain = check(
      input(
        { sales: [], documents: [], movements: [movement('sin-v1:x-0-1-add', 'itm_sugar', 5, 'ADD', PLAIN)] },
        {
          invoices: [{ ...INVOICES[0]!, businessId: PLAIN }],
          recorded: [{ businessId: PLAIN, purchase: { id: 'CONF', status: 'confirmed' } }],
          from: { [BIZ]: FROM },
        },
      ),
    );
    expect(plain.stray.movements).toEqual([]);
    expect(item(plain, 'itm_sugar', PLAIN)).toMatchObject({ net: false, extra: { deduct: 0, add: 5, net: 0 } });
    expect(plain.incoming).toMatchObject({ counted: 0, expectedQuantity: 0, mismatches: 0 });
    expect(plain.totals.exactlyOnceViolations).toBe(1);
    expect(plain.ok).toBe(false);
  });
});
