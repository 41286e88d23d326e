/**
 * Recovery after a rejection against a service that words the rejection of an unregistered item its own way: the
 * sandbox's `authority.unregisteredItemCause` switch makes it answer another code, naming neither the item nor the
 * line. The sale reads the service's item list, registers what is missing and resubmits: signed once, no operator.
 */
import { describe, expect, it } from 'vitest';
import { DEMO, activityResults, addItemCopy, fastFixture, saleInput, useSaleHarness } from './harness.js';
import { carriersOf, type LedgerAt } from './ledger-reads.js';

const OTHER_WORDING = 'article_unknown';
let soap = '';
const h = useSaleHarness({
  fixture: fastFixture((f) => {
    soap = addItemCopy(f, DEMO.items.bathSoap, 'recovery');
    f.authority = { ...f.authority, unregisteredItemCause: OTHER_WORDING };
  }),
});

const nairobiLedger = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: DEMO.businesses.nairobi,
  branchId: DEMO.branches.nairobiCbd,
});

describe('a rejection for an unregistered item under a cause code the contract does not define', () => {
  it('registers the item the service lists as not registered and signs the sale exactly once', async () => {
    const line = { itemId: soap, quantity: 1, unitPrice: 120 };
    // The first sale registers the item and the worker remembers it as REGISTERED...
    const first = await (await h.start(saleInput({ lines: [line] }))).result();
    expect(first.sale?.status).toBe('completed');
    // (its line recorded by the branch's stock ledger first, which sends it after the sale has closed)
    await carriersOf(nairobiLedger(), first.stockMovements);
    // ...then the service forgets it (a reset puts every item back to its fixture state, PENDING).
    await h.sandbox.inspector.reset();
    const since = Date.now();
    const handle = await h.start(saleInput({ lines: [line] }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(2);
    expect(state.history.filter((e) => e.event.startsWith('parked'))).toEqual([]);
    // The line's movement is the ledger's, once the sale is signed: awaited before the log is read.
    await carriersOf(nairobiLedger(), state.stockMovements);
    const log = await h.sandbox.inspector.requestLog({ since, service: 'compliance' });
    expect(log.filter((r) => r.method === 'POST').map((r) => `${r.route} ${r.status}`)).toEqual([
      '/v1/sales 422',
      '/v1/items/:id/register 200',
      '/v1/sales/:id/retry 200',
      '/v1/stock/adjustments 201',
    ]);
    const [filed, ...others] = await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber });
    expect(others).toEqual([]);
    expect(filed?.sale.status).toBe('completed');
    // The rejection the sale recovered from carried only the other wording: no item, no line, no contract code.
    const rejections = (await activityResults(handle)).flatMap((r) => {
      const submission = (r as { submission?: { causes?: unknown[] } } | undefined)?.submission;
      return submission?.causes?.length ? submission.causes : [];
    });
    expect(rejections).toEqual([{ code: OTHER_WORDING, message: expect.any(String) }]);
  });
});
