import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NeedsAttention } from '../../src/contracts/search-attributes.js';
import { getItemRegistrationStateQuery, itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { itemFixedUpdate } from '../../src/contracts/sale.js';
import { closeTestEnv } from '../helpers/temporal.js';
import {
  DEMO,
  addItemCopy,
  eventually,
  expectUpdateRefused,
  fastFixture,
  saleInput,
  searchAttribute,
  startSaleHarness,
  type SaleHarness,
} from './harness.js';
import { carriersOf, type LedgerAt } from './ledger-reads.js';

/** Fresh copies of the demo's unregistered items, so no other test or run has registered them already. */
const items = { soap: '', soapForTwo: '', soapForReset: '', spice: '' };
let h: SaleHarness;

beforeAll(async () => {
  const fixture = fastFixture((f) => {
    items.soap = addItemCopy(f, DEMO.items.bathSoap, 'single');
    items.soapForTwo = addItemCopy(f, DEMO.items.bathSoap, 'shared');
    items.soapForReset = addItemCopy(f, DEMO.items.bathSoap, 'reset');
    items.spice = addItemCopy(f, DEMO.items.spiceMix, 'fix');
  });
  h = await startSaleHarness({ fixture });
});
afterAll(async () => {
  await h?.close();
  await closeTestEnv();
});

const nairobi = DEMO.businesses.nairobi;
const nairobiLedger = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: nairobi,
  branchId: DEMO.branches.nairobiCbd,
});
const line = (itemId: string) => ({ itemId, quantity: 1, unitPrice: 120 });

/** Every run of the item's registration workflow, as visibility lists them. */
async function registrationRuns(itemId: string) {
  const runs = [];
  for await (const run of h.client.workflow.list({
    query: `WorkflowId = '${itemRegistrationWorkflowId(nairobi, itemId)}'`,
  }))
    runs.push(run);
  return runs;
}

async function calls(since: number, method: string, path: string) {
  return (await h.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
    (r) => r.method === method && r.path === path,
  );
}

describe('items a sale needs registered', () => {
  it('registers an unregistered item through its registration workflow before the sale is created', async () => {
    const since = Date.now();
    const handle = await h.start(saleInput({ lines: [line(DEMO.items.sugar), line(items.soap)] }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(1);

    const registration = h.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, items.soap));
    expect(await registration.result()).toMatchObject({
      itemId: items.soap,
      status: 'registered',
      waiters: [handle.workflowId],
    });
    const log = await h.sandbox.inspector.requestLog({ since, service: 'compliance' });
    const order = log.filter((r) => r.method === 'POST').map((r) => r.route);
    expect(order.indexOf('/v1/items/:id/register')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('/v1/items/:id/register')).toBeLessThan(order.indexOf('/v1/sales'));
    const [filed] = await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber });
    expect(filed?.submissions).toBe(1);
  });

  it('lets concurrent sales needing the same item converge on one registration run and one register call', async () => {
    // Registration takes a moment, as it does at the authority: long enough for both sales to ask meanwhile.
    await h.sandbox.inspector.addFault({
      service: 'compliance',
      method: 'POST',
      path: '/v1/items/:id/register',
      kind: 'latency',
      delayMs: 1_000,
    });
    const since = Date.now();
    const [a, b] = await Promise.all([
      h.start(saleInput({ lines: [line(items.soapForTwo)] })),
      h.start(saleInput({ lines: [line(items.soapForTwo)] })),
    ]);
    const [sa, sb] = await Promise.all([a.result(), b.result()]);
    await h.sandbox.inspector.clearFaults();
    expect([sa.sale?.status, sb.sale?.status]).toEqual(['completed', 'completed']);

    const runs = await eventually(
      () => registrationRuns(items.soapForTwo),
      (r) => r.length > 0 && r.every((x) => x.status.name === 'COMPLETED'),
    );
    expect(runs).toHaveLength(1);
    const registration = h.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, items.soapForTwo));
    expect((await registration.result()).waiters.toSorted()).toEqual([a.workflowId, b.workflowId].toSorted());
    expect(await calls(since, 'POST', `/v1/items/${items.soapForTwo}/register`)).toHaveLength(1);
    // At most one catalogue read served both sales (a refresh in progress or a recent one is shared).
    expect((await calls(since, 'GET', '/v1/items')).length).toBeLessThanOrEqual(1);
  });

  it('parks a sale whose item still needs something, and signs it once the operator fixed the item', async () => {
    const handle = await h.start(saleInput({ lines: [line(items.spice)] }));
    const parked = await h.waitFor(handle, (s) => s.step === 'parked');
    expect(parked.parked).toMatchObject({ code: 'item_needs_fixing', actions: ['itemFixed'], itemIds: [items.spice] });
    expect(parked.parked?.message).toContain(items.spice);
    expect(parked.sale).toBeNull();
    expect(await searchAttribute(handle, NeedsAttention)).toBe(true);
    // The UI's stack trace says where the sale waits, in the project's own source, with workflows' frames kept short.
    const stack = await handle.query<string>('__stack_trace');
    expect(stack).toMatch(/at Sale\.registerItems \(.*workflows\/document\/process\.ts:\d+:\d+\)/);
    expect(stack).toMatch(/at registerItems \(.*workflows\/sale\/sale\.ts:\d+:\d+\)/);
    expect(stack).toMatch(/at sign \(.*workflows\/sale\/sale\.ts:\d+:\d+\)/);
    const registration = h.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, items.spice));
    expect(await registration.query(getItemRegistrationStateQuery)).toMatchObject({
      status: 'needs_fixing',
      needs: { productType: false, classificationMapping: true },
    });
    // Nothing was filed while the item is not registered.
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: parked.traderInvoiceNumber })).toEqual([]);

    // Only the waiting item can be reported fixed.
    await expectUpdateRefused(
      handle.executeUpdate(itemFixedUpdate, { args: [{ itemId: DEMO.items.sugar }] }),
      /not waiting for a fix/,
    );

    await h.sandbox.inspector.fixItem(items.spice);
    await handle.executeUpdate(itemFixedUpdate, { args: [{ itemId: items.spice }] });
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.parked).toBeNull();
    expect(await searchAttribute(handle, NeedsAttention)).toBe(false);
    expect(await registration.result()).toMatchObject({ status: 'registered', needs: null });
  });

  it('registers and resubmits when the service says an item the worker thought registered is not', async () => {
    // The first sale registers the item and the worker remembers it as REGISTERED for good...
    const first = await (await h.start(saleInput({ lines: [line(items.soapForReset)] }))).result();
    // (its line recorded by the branch's stock ledger first, which sends it after the sale has closed)
    await carriersOf(nairobiLedger(), first.stockMovements);
    // ...then the service forgets it (a sandbox reset puts every item back to its fixture state).
    await h.sandbox.inspector.reset();
    const since = Date.now();
    const handle = await h.start(saleInput({ lines: [line(items.soapForReset)] }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(2);
    // The line's movement is the ledger's, once the sale is signed: awaited before the log is read.
    await carriersOf(nairobiLedger(), state.stockMovements);
    const routes = (await h.sandbox.inspector.requestLog({ since, service: 'compliance' }))
      .filter((r) => r.method === 'POST')
      .map((r) => `${r.route} ${r.status}`);
    expect(routes).toEqual([
      '/v1/sales 422',
      '/v1/items/:id/register 200',
      '/v1/sales/:id/retry 200',
      '/v1/stock/adjustments 201',
    ]);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber })).toHaveLength(1);
  });
});
