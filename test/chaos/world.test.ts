import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { chaosWorld } from '../../tools/chaos/world.js';

/**
 * The sandbox clamps a DEDUCT at 0 (contract assumption C28), which would make a ledger's quantity-on-hand evidence
 * inconclusive and send its uncertain movements to an operator for a reason the run is not about: the chaos world
 * starts every stock-tracked item at every branch with far more than a run can sell.
 */
describe('the chaos world', () => {
  const world = chaosWorld({ totalRequestsPerMinute: 1200 });
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ fixture: { compliance: world.fixture } });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('starts the sandbox with 1,000,000 of every stock-tracked item at every branch, and nothing of untracked items', async () => {
    for (const business of world.catalog) {
      const levels = await sandbox.inspector.stockLevels(business.businessId);
      const held = new Map(levels.map((l) => [`${l.itemId}@${l.branchId}`, l.quantity]));
      for (const item of business.items) {
        for (const branchId of business.branchIds) {
          expect(held.get(`${item.itemId}@${branchId}`), `${business.businessId} ${item.itemId} at ${branchId}`).toBe(
            item.stockTracked ? 1_000_000 : undefined,
          );
        }
      }
    }
    // Every business sells stock-tracked items: every business has ledgers in a run.
    expect(world.catalog.every((b) => b.items.some((i) => i.stockTracked))).toBe(true);
  });
});
