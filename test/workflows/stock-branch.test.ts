/**
 * One stock ledger per physical branch, end to end: sales naming their branch by id, by `authorityBhfId` and not at all
 * (the first branch) hand their lines to one ledger, whose evidence relies on being the branch's only writer. Real
 * workers, the real sandbox over HTTP; what is proven comes from the ledger's state and the sandbox's own records.
 */
import { describe, expect, it } from 'vitest';
import { stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { DEMO, saleInput, useSaleHarness } from './harness.js';
import { expectRecordedOnce, ledgerHandle, type LedgerAt } from './ledger-reads.js';

const h = useSaleHarness();
const nairobi = DEMO.businesses.nairobi;
const cbd = DEMO.branches.nairobiCbd;
const westlands = DEMO.branches.nairobiWestlands;

describe('the branch of a sale, however named, reaches one stock ledger', () => {
  it('by id, by authorityBhfId and by default (the first branch): one ledger, each movement recorded once at the branch', async () => {
    const lines = [
      { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
      { itemId: DEMO.items.cookingOil, quantity: 1, unitPrice: 389.99 },
    ];
    // Nairobi CBD is the business's first branch, and its authorityBhfId is '00' (sandbox/default-fixture.ts).
    const named = [{ branchId: cbd }, { branchId: '00' }, {}];
    const closed = await Promise.all(
      named.map(async (branch) => (await h.start(saleInput({ ...branch, lines }))).result()),
    );

    const ledgerId = stockLedgerWorkflowId(h.taskQueue, nairobi, cbd);
    const movements = closed.flatMap((sale) => sale.stockMovements);
    expect(movements).toHaveLength(named.length * lines.length);
    expect(new Set(movements.map((m) => m.ledger))).toEqual(new Set([ledgerId]));

    const at: LedgerAt = { client: h.client, taskQueue: h.taskQueue, businessId: nairobi, branchId: cbd };
    const carriers = await expectRecordedOnce(at, h.sandbox.inspector, movements);
    for (const carrier of new Map(carriers.map((c) => [c.referenceId, c])).values()) {
      const [record] = await h.sandbox.inspector.stockMovements({
        businessId: nairobi,
        referenceId: carrier.referenceId,
      });
      expect(record?.branchId).toBe(cbd);
    }
    // Nothing was started under the other names.
    for (const other of ['00', 'first-branch']) {
      await expect(ledgerHandle({ ...at, branchId: other }).describe()).rejects.toThrow();
    }
  });

  it('another branch named by its authorityBhfId has a ledger of its own, under its id', async () => {
    const line = { itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 };
    const closed = await (await h.start(saleInput({ branchId: '01', lines: [line] }))).result();
    const at: LedgerAt = { client: h.client, taskQueue: h.taskQueue, businessId: nairobi, branchId: westlands };
    expect(closed.stockMovements.map((m) => m.ledger)).toEqual([
      stockLedgerWorkflowId(h.taskQueue, nairobi, westlands),
    ]);
    const [carrier] = await expectRecordedOnce(at, h.sandbox.inspector, closed.stockMovements);
    const [record] = await h.sandbox.inspector.stockMovements({
      businessId: nairobi,
      referenceId: carrier!.referenceId,
    });
    expect(record?.branchId).toBe(westlands);
  });
});
