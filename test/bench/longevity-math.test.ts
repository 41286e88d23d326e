/** The longevity section's world and arithmetic held to their definitions (tools/bench/longevity.ts's header). */
import { describe, expect, it } from 'vitest';
import { parseFixture } from '../../sandbox/fixture.js';
import { PurchaseFixtureSchema } from '../../sandbox/compliance/fixture-schema.js';
import { answerNames } from '../../src/contracts/item-names.js';
import { MappingTable, matchLine } from '../../workflows/stock-in/matching.js';
import {
  budgetShare,
  carriedAt,
  changeOutcomes,
  chunkBound,
  duplicateEvents,
  expectedOnHand,
  finalStatuses,
  passOf,
  payloadScale,
  recordsIn,
  LEDGER_CARRY_CAPS,
  scaledLedgerCarry,
  scaledPayload,
  simHours,
  stockExact,
  stockGroups,
  stockMoves,
  syncDayModel,
  type LongevityMovement,
  type SinkEvent,
} from '../../tools/bench/longevity-math.js';
import {
  addDays,
  longevityWorld,
  purchaseFixture,
  type LongevityWorldOptions,
  type WorldInvoice,
} from '../../tools/bench/longevity-world.js';

const options: LongevityWorldOptions = {
  businessId: 'biz_lg_t',
  tag: 't',
  key: 'cmp_sk_test_bench_0123456789abcdefgh',
  today: '2026-11-28',
  days: 730,
  invoicesPerDay: 12,
  stride: 10,
  denseDays: 14,
  items: 300,
  suppliers: 5,
  mappedPerSupplier: 50,
  byNamePerSupplier: 5,
  branches: 3,
  linesMin: 3,
  linesMax: 8,
  stockInDaysBack: 365,
  oldRejectedShare: 0.05,
  oldPendingShare: 0.005,
  requestsPerWindow: 120,
  windowMs: 500,
  tillItems: 30,
  seed: 41,
  plan: {
    intervals: 8,
    unconfirmThenConfirm: 0.01,
    unconfirmThenReject: 0.002,
    rejectAtOnce: 0.002,
    atLeast: 2,
    lateInvoices: 3,
    lateDaysBack: [14, 42],
    newInvoices: 4,
    recentReviewShare: 0.6,
  },
};

describe('the world', () => {
  const world = longevityWorld(options);
  const fixed = world.invoices.filter((v) => !v.arrives);

  it('is a fixture the sandbox accepts: two years of invoices to yesterday, 3–8 distinct lines each', () => {
    const business = parseFixture({ compliance: world.fixture }).compliance.businesses[0]!;
    expect(business.purchases).toHaveLength(fixed.length);
    // Every day of the last 14, every 10th day before (20…730): 14 + 72 days of 12.
    expect(fixed.length).toBeGreaterThan(86 * 12 * 0.9);
    expect(fixed.length).toBeLessThan(86 * 12 * 1.1);
    expect(new Set(fixed.map((v) => v.invoiceDate)).size).toBe(86);
    expect(fixed.every((v) => v.invoiceDate >= addDays('2026-11-28', -730) && v.invoiceDate < '2026-11-28')).toBe(true);
    for (const v of world.invoices) {
      expect(v.lines.length).toBeGreaterThanOrEqual(3);
      expect(v.lines.length).toBeLessThanOrEqual(8);
      expect(new Set(v.lines.map((l) => l.itemId)).size).toBe(v.lines.length);
      expect(PurchaseFixtureSchema.safeParse(purchaseFixture(v, world.suppliers, true)).success).toBe(true);
    }
    expect(world.stockInFrom).toBe('2025-11-28');
  });

  it("matches every line: a supplier's wording by the merchant's mapping, the rest by the item's name", () => {
    expect(world.mappings).toHaveLength(5 * 50);
    const table = new MappingTable(world.mappings.map((m) => ({ ...m, factor: 1, source: 'merchant' as const })));
    const lines = world.invoices.flatMap((v) => v.lines.map((l) => ({ v, l })));
    const byName = lines.filter(({ l }) => !l.mapped).map(({ l }) => l.description);
    expect(byName.length).toBeGreaterThan(0);
    const names = answerNames(world.catalogue, byName);
    for (const { v, l } of lines) {
      const pin = world.suppliers[v.supplier]!.pin;
      const found = matchLine(table, l.mapped ? undefined : names, pin, { description: l.description, code: null });
      expect(found && 'itemId' in found ? found.itemId : undefined).toBe(l.itemId);
      expect(found?.by).toBe(l.mapped ? 'merchant' : 'name');
    }
  });

  it('plans each change between two syncs, a follow-up at least two syncs after the change it follows', () => {
    const kinds = new Set(world.plan.map((c) => c.kind));
    for (const kind of ['unconfirm', 'reconfirm', 'reject_after_unconfirm', 'reject_at_once', 'late_arrival'] as const)
      expect(kinds.has(kind)).toBe(true);
    for (const c of world.plan) {
      expect(c.atInterval % 1).toBeGreaterThan(0);
      expect(c.atInterval).toBeLessThan(options.plan.intervals);
    }
    const byInvoice = Map.groupBy(world.plan, (c) => c.purchaseId);
    for (const changes of byInvoice.values())
      for (let i = 1; i < changes.length; i++)
        expect(changes[i]!.atInterval - changes[i - 1]!.atInterval).toBeGreaterThanOrEqual(2);
    const late = world.invoices.filter((v) => v.arrives === 'late');
    expect(late).toHaveLength(3);
    for (const v of late) expect(v.invoiceDate <= addDays('2026-11-28', -14)).toBe(true);
    // Old changes touch confirmed invoices of the last year (and late ones, dated weeks back, confirmed).
    const byId = new Map(world.invoices.map((v) => [v.id, v]));
    for (const c of world.plan.filter((p) => p.old && p.kind === 'late_confirm'))
      expect(byId.get(c.purchaseId)!.arrives).toBe('late');
    for (const c of world.plan.filter((p) => p.old && p.kind !== 'late_confirm')) {
      expect(byId.get(c.purchaseId)!.invoiceDate >= world.stockInFrom).toBe(true);
      expect(byId.get(c.purchaseId)!.status).toBe('confirmed');
    }
  });
});

const invoice = (id: string, date: string, status: WorldInvoice['status'], arrives?: 'late'): WorldInvoice => ({
  id,
  supplier: 0,
  supplierInvoiceNumber: id,
  invoiceDate: date,
  branchId: 'br_1',
  status,
  lines: [
    { line: 0, description: 'A', itemId: 'itm_a', quantity: 2, unitPrice: 30, mapped: true },
    { line: 1, description: 'B', itemId: 'itm_b', quantity: 5, unitPrice: 40, mapped: false },
  ],
  ...(arrives ? { arrives } : {}),
});
const movement = (m: Partial<LongevityMovement> & Pick<LongevityMovement, 'itemId' | 'action' | 'quantity'>) => ({
  branchId: 'br_1',
  unitPrice: m.itemId === 'itm_a' ? 30 : 40,
  referenceId: null,
  at: 0,
  ...m,
});

describe('stock', () => {
  const invoices = [
    invoice('p1', '2026-06-01', 'confirmed'),
    invoice('p2', '2026-06-02', 'confirmed'),
    invoice('p3', '2025-01-01', 'confirmed'),
    invoice('p4', '2026-11-01', 'pending_review', 'late'),
  ];
  const plan = [
    { purchaseId: 'p1', status: 'pending_review' as const },
    { purchaseId: 'p2', status: 'rejected' as const },
    { purchaseId: 'p4', status: 'pending_review' as const },
    { purchaseId: 'p1', status: 'confirmed' as const },
    { purchaseId: 'p4', status: 'confirmed' as const },
  ];

  it('adds an invoice each time it reaches confirmed and takes it back each time it leaves; none before the start', () => {
    expect(stockMoves(invoices, plan, '2025-11-28')).toEqual([
      { purchaseId: 'p1', action: 'ADD', change: undefined },
      { purchaseId: 'p2', action: 'ADD', change: undefined },
      { purchaseId: 'p1', action: 'DEDUCT', change: 0 },
      { purchaseId: 'p2', action: 'DEDUCT', change: 1 },
      { purchaseId: 'p1', action: 'ADD', change: 3 },
      { purchaseId: 'p4', action: 'ADD', change: 4 },
    ]);
  });

  it('counts groups over and under their lines, and references recorded twice', () => {
    const moves = stockMoves(invoices, plan, '2025-11-28');
    const recorded: LongevityMovement[] = [
      movement({ itemId: 'itm_a', action: 'ADD', quantity: 8, referenceId: 'r1' }),
      movement({ itemId: 'itm_b', action: 'ADD', quantity: 25, referenceId: 'r1' }),
      movement({ itemId: 'itm_a', action: 'DEDUCT', quantity: 2 }),
      movement({ itemId: 'itm_b', action: 'DEDUCT', quantity: 10 }),
      // A sale: not the stock-in's.
      movement({ itemId: 'itm_a', action: 'DEDUCT', quantity: 1, unitPrice: 50 }),
    ];
    // ADD: p1, p2 at the start, p1 again and p4 (8 of itm_a, 20 of itm_b); DEDUCT: p1 and p2 once (4 and 10).
    const g = stockGroups(invoices, moves, recorded, (m) => m.unitPrice !== 50);
    expect(g.over.map((x) => x.key)).toEqual(['br_1|itm_b|ADD|40']);
    expect(g.under.map((x) => x.key)).toEqual(['br_1|itm_a|DEDUCT|30']);
    expect(g.duplicateReferenceIds).toEqual(['r1']);
  });

  it('expects opening + lines of invoices confirmed at the end (from the start date) − sales', () => {
    const final = finalStatuses(invoices, plan);
    expect(final.get('p2')).toBe('rejected');
    const expected = expectedOnHand({
      invoices,
      final,
      from: '2025-11-28',
      opening: [{ branchId: 'br_1', itemId: 'itm_a', quantity: 100 }],
      sold: [{ branchId: 'br_1', itemId: 'itm_a', quantity: 3 }],
    });
    expect(Object.fromEntries(expected)).toEqual({ 'br_1|itm_a': 101, 'br_1|itm_b': 10 });
    const exact = stockExact(
      expected,
      new Map([
        ['br_1|itm_a', 101],
        ['br_1|itm_b', 9],
        ['br_2|itm_a', 1],
      ]),
    );
    expect(exact.pairs).toBe(3);
    expect(exact.share).toBeCloseTo(1 / 3);
  });

  it('carries each demand by the first movement at or after it that covers it', () => {
    const at = carriedAt(
      [
        { group: 'g', quantity: 2, at: 100, change: 0 },
        { group: 'g', quantity: 3, at: 200, change: 1 },
        { group: 'h', quantity: 1, at: 100, change: 2 },
      ],
      [
        { group: 'g', quantity: 1, at: 50 },
        { group: 'g', quantity: 1, at: 150 },
        { group: 'g', quantity: 2, at: 300 },
        { group: 'h', quantity: 1, at: 90 },
      ],
    );
    // g: 2 asked by 100, covered at 150; 5 asked by 200, only 4 recorded. h: its movement came before it.
    expect(at).toEqual([150, undefined, undefined]);
  });
});

describe('changes and events', () => {
  const events: SinkEvent[] = [
    {
      id: 'purchase.p1.v1.aa',
      type: 'purchase.status_changed',
      purchaseId: 'p1',
      status: 'pending_review',
      fingerprint: 'aa',
      seenAt: 1_000,
    },
    {
      id: 'purchase.p1.v2.bb',
      type: 'purchase.status_changed',
      purchaseId: 'p1',
      status: 'confirmed',
      fingerprint: 'bb',
      seenAt: 5_000,
    },
    {
      id: 'purchase.p1.v3.bb',
      type: 'purchase.status_changed',
      purchaseId: 'p1',
      status: 'confirmed',
      fingerprint: 'bb',
      seenAt: 6_000,
    },
    {
      id: 'purchase.p1.v3.bb',
      type: 'purchase.status_changed',
      purchaseId: 'p1',
      status: 'confirmed',
      fingerprint: 'bb',
      seenAt: 6_000,
    },
  ];

  it('times a change to its event and its stock, whichever came last, in simulated hours', () => {
    const outcomes = changeOutcomes({
      changes: [
        { purchaseId: 'p1', kind: 'unconfirm', status: 'pending_review', old: true, at: 500 },
        { purchaseId: 'p1', kind: 'reconfirm', status: 'confirmed', old: true, at: 4_000 },
        { purchaseId: 'p2', kind: 'reject_at_once', status: 'rejected', old: true, at: 4_000 },
      ],
      events,
      stock: [
        { moves: true, at: 2_500 },
        { moves: true, at: undefined },
        { moves: true, at: 4_500 },
      ],
      k: 120,
    });
    expect(outcomes[0]!.delayHours).toBeCloseTo(simHours(2_000, 120));
    expect(outcomes[1]!.lost).toBe('stock');
    expect(outcomes[2]!.lost).toBe('event');
    expect(simHours(30_000, 120)).toBe(1);
  });

  it('counts an id twice, and a fact repeated under another id', () => {
    expect(duplicateEvents(events)).toMatchObject({ sameId: 1, sameFact: 1 });
  });

  it("names a listing's pass by its query", () => {
    const dates = { windowStart: '2026-11-21', oldest: '2024-11-28' };
    expect(passOf({ status: 'pulled', fromDate: dates.oldest }, dates)).toBe('pulled');
    expect(passOf({ status: 'pending_review', fromDate: dates.oldest }, dates)).toBe('pending_review');
    expect(passOf({ fromDate: dates.windowStart }, dates)).toBe('recent');
    expect(passOf({ fromDate: dates.oldest }, dates)).toBe('full');
    expect(passOf({ fromDate: '2026-01-01', toDate: '2026-01-01' }, dates)).toBe('left_review');
    expect(passOf({ fromDate: '2026-01-01', toDate: '2026-01-08' }, dates)).toBe('sweep');
  });
});

describe('the model of a day of syncs', () => {
  const full = syncDayModel({
    invoicesPerDay: 300,
    stride: 1,
    days: 730,
    windowDays: 7,
    horizonDays: 730,
    sweepHours: 24,
    intervalMinutes: 15,
    syncs: 96,
    pageSize: 100,
    pulled: 75,
    inReview: 1_700,
    oldReviewExitsPerDay: 1_300,
    newPerDay: 300,
  });

  it('sweeps the horizon in 8-day slices, once in under a day, as the product plans it', () => {
    // 8 days a slice (723 days × 15 min ÷ 24 h, rounded up), the one reaching the horizon's end shorter.
    expect(full.sliceDays.every((d) => d <= 8)).toBe(true);
    expect(full.sliceDays.filter((d) => d !== 8).length).toBeLessThanOrEqual(2);
    expect(full.sweepCycleSyncs).toBe(Math.ceil(723 / 8));
    expect(full.sweepCycleHours).toBeLessThanOrEqual(24);
    // No date waits much longer than a sweep between two listings by the window or the sweep.
    expect(full.maxListingGapHours).toBeGreaterThanOrEqual(full.sweepCycleHours - 0.25);
    expect(full.maxListingGapHours).toBeLessThanOrEqual(full.sweepCycleHours + 24);
  });

  it('costs a page per 100 invoices of each listing, at least one', () => {
    expect(full.byPass.pull).toBe(96);
    expect(full.byPass.pulled).toBe(96);
    expect(full.byPass.pending_review).toBe(96 * 17);
    expect(full.byPass.sweep).toBe(full.sliceDays.reduce((n, days) => n + Math.max(1, Math.ceil(days * 3)), 0));
    expect(full.byPass.left_review).toBe(Math.round(1_300));
    expect(full.requests).toBe(Object.values(full.byPass).reduce((a, b) => a + b, 0));
    expect(budgetShare(full.requests, 120, 24 * 60)).toBeCloseTo(full.requests / 172_800);
  });
});

describe('payloads at another scale', () => {
  const scales = { density: 25, volume: 212, review: 59, activity: 7, mappings: 10, perBranch: 8.5 };

  it('keeps what a page or an update bounds, grows the rest with what it holds', () => {
    expect(payloadScale({ workflowType: 'purchasesSyncWorkflow', name: 'listPurchasesPage' }, scales)).toBe(1);
    expect(payloadScale({ workflowType: 'stockInWorkflow', name: 'purchasesSeen' }, scales)).toBe(1);
    expect(payloadScale({ workflowType: 'stockInWorkflow', name: 'putMappings' }, scales)).toBe(1);
    expect(payloadScale({ workflowType: 'purchasesSyncWorkflow', name: 'writePurchaseBooks' }, scales)).toBe(1);
    expect(payloadScale({ workflowType: 'stockInWorkflow', name: 'writePurchaseBooks' }, scales)).toBe(212);
    expect(payloadScale({ workflowType: 'purchasesSyncWorkflow', name: '' }, scales)).toBe(59);
    expect(payloadScale({ workflowType: 'purchasesBookWorkflow', name: 'write' }, scales)).toBe(25);
    expect(payloadScale({ workflowType: 'stockInMappingsWorkflow', name: '' }, scales)).toBe(10);
    expect(payloadScale({ workflowType: 'saleWorkflow', name: 'signSale' }, scales)).toBe(1);
    expect(scaledPayload({ bytes: 10_000, records: 10, ratio: 150 })).toBe(1_500_000);
    // Writes cut in batches of 100 are bounded; the largest of a kind differing are not.
    expect(chunkBound([100, 100, 100, 37])).toBe(true);
    expect(chunkBound([283, 120, 97])).toBe(false);
    expect(chunkBound([1, 1])).toBe(false);
    expect(scaledPayload({ bytes: 500, records: 0, ratio: 150 })).toBe(500);
  });

  it("grows a ledger's carry up to its caps: line ids, quantities on hand, lines the stock-in's pace lets it hold", () => {
    const line = (i: number) => ({
      lineId: `pur_${String(i).padStart(6, '0')}:0:1`,
      saleWorkflowId: 'stock-in',
      itemId: 'itm_00001',
      action: 'ADD',
      quantity: 10,
      unitPrice: 100,
      takenAt: 1_700_000_000_000,
    });
    const carry = (ids: number, items: number, waiting = 0) => ({
      businessId: 'b',
      carried: {
        nextSequence: 1,
        lineIds: Array.from({ length: ids }, (_, i) => `#${String(i).padStart(16, '0')}`),
        onHand: Object.fromEntries(Array.from({ length: items }, (_, i) => [`itm_${String(i).padStart(5, '0')}`, i])),
        pending: Array.from({ length: waiting }, (_, i) => line(i)),
        open: [],
      },
    });
    const small = carry(300, 200, 100);
    const bytes = Buffer.byteLength(JSON.stringify(small));
    const atCaps = Buffer.byteLength(JSON.stringify(carry(3_000, 2_000, LEDGER_CARRY_CAPS.pending)));
    // Twenty times as many would be past both caps: the carry at its caps (its numbers a digit longer there).
    expect(Math.abs(scaledLedgerCarry(bytes, small, 20) - atCaps) / atCaps).toBeLessThan(0.05);
    expect(scaledLedgerCarry(bytes, small, 1)).toBe(bytes);
  });

  it('finds the records a payload carries: its longest array or record map', () => {
    expect(recordsIn({ records: Array.from({ length: 12 }, () => ({})) })).toBe(12);
    const map = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`p${i}`, { entry: [] }]));
    expect(recordsIn({ carried: { records: map } })).toBe(9);
    expect(recordsIn('text')).toBe(0);
  });
});
