import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO, failureOf, requestsTo, runActivity, useHarnessFactory, useSandbox } from './helpers.js';

/** Item checks, registration and stock: the item registry's list calls are counted by the sandbox itself. */
const sandbox = useSandbox();
const business = DEMO.businesses.nairobi;
const { milk, sugar, giftVoucher, bathSoap, spiceMix, beefSamosa } = DEMO.items;

/** Each harness has its own item registry, as a separate worker process would. */
const newHarness = useHarnessFactory(sandbox);
let clock = 0;
let clocked: ReturnType<typeof newHarness> | undefined;
/** One registry for the file whose clock the tests drive. */
const manualClock = () => (clocked ??= newHarness({ registry: { now: () => clock } }));
const listCalls = (since: number) => requestsTo(sandbox(), 'GET', '/v1/items', since);

describe('checkItems', () => {
  it('lists the items once; registered items are then answered from the cache with no call', async () => {
    const { activities } = manualClock();
    const since = Date.now();
    const first = await runActivity(activities.checkItems, { businessId: business, itemIds: [milk, giftVoucher] });
    expect(first).toEqual({
      items: [
        { itemId: milk, registered: true, stockTracked: true, unitPrice: 65 },
        { itemId: giftVoucher, registered: true, stockTracked: false, unitPrice: expect.any(Number) },
      ],
    });
    // Much later: registration only moves forward, so registered items never need a refresh.
    clock += 3_600_000;
    const second = await runActivity(activities.checkItems, {
      businessId: business,
      itemIds: [giftVoucher, milk, milk],
    });
    expect(second.items.map((i) => i.itemId)).toEqual([giftVoucher, milk]);
    expect(listCalls(since)).toBe(1);
  });

  it('answers unregistered items from a list younger than the refresh interval, then lists again', async () => {
    const { activities } = manualClock();
    const since = Date.now();
    clock += 10_000;
    const check = () => runActivity(activities.checkItems, { businessId: business, itemIds: [sugar, spiceMix] });
    expect(await check()).toMatchObject({
      items: [
        { itemId: sugar, registered: true },
        { itemId: spiceMix, registered: false },
      ],
    });
    clock += 1_500;
    await check();
    expect(listCalls(since)).toBe(1);
    clock += 1_000;
    await check();
    expect(listCalls(since)).toBe(2);
  });

  it('concurrent checks share one list call', async () => {
    const { activities } = newHarness(); // a fresh registry: nothing cached
    const since = Date.now();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        runActivity(activities.checkItems, { businessId: business, itemIds: [sugar, beefSamosa] }),
      ),
    );
    expect(listCalls(since)).toBe(1);
    for (const result of results) expect(result.items.map((i) => i.registered)).toEqual([true, false]);
  });

  it('an item the business does not have is the non-retryable item_not_found naming it', async () => {
    const { activities } = newHarness();
    const unknown = `itm_unknown_${randomUUID().slice(0, 8)}`;
    const failure = await failureOf(
      runActivity(activities.checkItems, { businessId: business, itemIds: [milk, unknown] }),
    );
    expect(failure).toMatchObject({ type: 'item_not_found', nonRetryable: true });
    expect(failure.message).toContain(unknown);
    expect(failure.details).toEqual([{ businessId: business, itemIds: [unknown] }]);
  });

  it('a failed list call is retryable, and the next attempt lists again', async () => {
    const { activities } = newHarness();
    const since = Date.now();
    sandbox().faults.add({ method: 'GET', path: '/v1/items', kind: 'error', status: 503, times: 1 });
    const failure = await failureOf(runActivity(activities.checkItems, { businessId: business, itemIds: [milk] }));
    expect(failure).toMatchObject({ type: 'service_unavailable', nonRetryable: false });
    expect(
      await runActivity(activities.checkItems, { businessId: business, itemIds: [milk] }, { attempt: 2 }),
    ).toMatchObject({ items: [{ itemId: milk, registered: true }] });
    expect(listCalls(since)).toBe(2);
  });
});

describe('registerItem', () => {
  it('registers an item that lacks nothing, and the registry knows without another list call', async () => {
    const { activities } = newHarness();
    const since = Date.now();
    expect(await runActivity(activities.checkItems, { businessId: business, itemIds: [bathSoap] })).toMatchObject({
      items: [{ itemId: bathSoap, registered: false }],
    });
    expect(await runActivity(activities.registerItem, { businessId: business, itemId: bathSoap })).toEqual({
      outcome: 'registered',
    });
    expect(await runActivity(activities.checkItems, { businessId: business, itemIds: [bathSoap] })).toEqual({
      items: [{ itemId: bathSoap, registered: true, stockTracked: true, unitPrice: expect.any(Number) }],
    });
    expect(listCalls(since)).toBe(1);
    // Registering again is safe (C23).
    expect(
      await runActivity(activities.registerItem, {
        businessId: business,
        itemId: bathSoap,
        branchId: DEMO.branches.nairobiWestlands,
      }),
    ).toMatchObject({
      outcome: 'registered',
    });
  });

  it.each([
    ['spice mix', spiceMix, { productType: false, classificationMapping: true }],
    ['beef samosa', beefSamosa, { productType: true, classificationMapping: false }],
  ])('an item that still needs something (%s) is needs_fixing, a business outcome', async (_name, itemId, needs) => {
    const { activities } = newHarness();
    expect(await runActivity(activities.registerItem, { businessId: business, itemId }, { attempt: 2 })).toEqual({
      outcome: 'needs_fixing',
      needs,
    });
  });

  it('an unknown item is the non-retryable not_found', async () => {
    const { activities } = newHarness();
    const failure = await failureOf(runActivity(activities.registerItem, { businessId: business, itemId: 'itm_nope' }));
    expect(failure).toMatchObject({ type: 'not_found', nonRetryable: true });
  });
});

describe('adjustStock', () => {
  it('records one movement and returns its id and the quantity on hand', async () => {
    const { activities } = newHarness();
    const levelOf = async () =>
      (await sandbox().inspector.stockLevels(business)).find(
        (l) => l.itemId === sugar && l.branchId === DEMO.branches.nairobiCbd,
      )?.quantity;
    const before = await levelOf();
    expect(before).toBeGreaterThan(2);
    const referenceId = `test:${randomUUID()}:0:DEDUCT`;
    const result = await runActivity(activities.adjustStock, {
      businessId: business,
      itemId: sugar,
      action: 'DEDUCT',
      quantity: 2,
      unitPrice: 250,
      referenceId,
    });
    // queuedMs: how long the attempt waited to start (the mock environment's scheduling time is a fixed 1 ms).
    expect(result).toEqual({
      movementId: expect.any(String),
      quantityOnHand: (before ?? 0) - 2,
      queuedMs: expect.any(Number),
    });
    const movements = await sandbox().inspector.stockMovements({ referenceId });
    expect(movements).toMatchObject([
      {
        movementId: result.movementId,
        action: 'DEDUCT',
        quantity: 2,
        itemId: sugar,
        branchId: DEMO.branches.nairobiCbd,
      },
    ]);
    expect(await levelOf()).toBe(result.quantityOnHand);
  });

  it('adds at the branch asked for', async () => {
    const { activities } = newHarness();
    const referenceId = `test:${randomUUID()}:0:ADD`;
    const result = await runActivity(activities.adjustStock, {
      businessId: business,
      branchId: DEMO.branches.nairobiWestlands,
      itemId: milk,
      action: 'ADD',
      quantity: 3,
      unitPrice: 65,
      referenceId,
    });
    expect(await sandbox().inspector.stockMovements({ referenceId })).toMatchObject([
      {
        movementId: result.movementId,
        action: 'ADD',
        branchId: DEMO.branches.nairobiWestlands,
        quantityOnHand: result.quantityOnHand,
      },
    ]);
  });
});
