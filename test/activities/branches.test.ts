/**
 * The canonical branch: names resolve as the service resolves them, the listing is read once per business per process,
 * and again only for a name it did not know, at most once per interval; a name it still does not know is never guessed.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { cachedCanonicalBranch } from '../../activities/branches.js';
import type { Business } from '../../src/compliance/schemas.js';

const branch = (id: string, authorityBhfId: string) => ({ id, authorityBhfId });

function listing(initial: Business[]) {
  const state = { businesses: initial, reads: 0, clock: 0 };
  const list = async () => {
    state.reads++;
    await Promise.resolve();
    return state.businesses;
  };
  return { state, list, now: () => state.clock };
}

const shop: Business = { id: 'biz_a', branches: [branch('br_main', '00'), branch('br_depot', '01')] };
const other: Business = { id: 'biz_b', branches: [branch('br_b', '00')] };

describe('cachedCanonicalBranch', () => {
  it('resolves an id, an authorityBhfId and no name (the first branch) to one id, from one read for the key', async () => {
    const world = listing([shop, other]);
    const canonical = cachedCanonicalBranch(world.list, { now: world.now });
    const resolved = await Promise.all([
      canonical('biz_a', 'br_main'),
      canonical('biz_a', '00'),
      canonical('biz_a', undefined),
      canonical('biz_a', '01'),
    ]);
    expect(resolved).toEqual(['br_main', 'br_main', 'br_main', 'br_depot']);
    // The answer listed the other business too.
    expect(await canonical('biz_b', '00')).toBe('br_b');
    expect(world.state.reads).toBe(1);
  });

  it('prefers a branch id over another branch’s authorityBhfId, as the service does', async () => {
    const world = listing([{ id: 'biz_c', branches: [branch('01', '00'), branch('br_x', '01')] }]);
    expect(await cachedCanonicalBranch(world.list)('biz_c', '01')).toBe('01');
  });

  it('reads again for an unknown name once the interval has passed, and never guesses a ledger for it', async () => {
    const world = listing([shop]);
    const canonical = cachedCanonicalBranch(world.list, { now: world.now, rereadAfterMs: 60_000 });
    const refused = await canonical('biz_a', 'br_new').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: 'unknown_branch', nonRetryable: false });
    expect((refused as Error).message).toContain('br_main, br_depot');
    world.state.businesses = [{ ...shop, branches: [...shop.branches, branch('br_new', '02')] }];
    world.state.clock = 59_999;
    await expect(canonical('biz_a', 'br_new')).rejects.toThrow(/no branch "br_new"/);
    expect(world.state.reads).toBe(1);
    world.state.clock = 60_000;
    expect(await canonical('biz_a', '02')).toBe('br_new');
    expect(world.state.reads).toBe(2);
  });

  it('fails a read refused for good retryably: a signed sale waits rather than fails', async () => {
    const refusedForGood = ApplicationFailure.create({
      type: 'business_not_served',
      message: 'no',
      nonRetryable: true,
    });
    const canonical = cachedCanonicalBranch(() => Promise.reject(refusedForGood));
    await expect(canonical('biz_a', undefined)).rejects.toMatchObject({
      type: 'business_not_served',
      nonRetryable: false,
    });
  });

  it('resolves a branch’s name (a supplier invoice names its branch so): exactly, then in any case and spacing', async () => {
    const named = (id: string, authorityBhfId: string, name: string) => ({ ...branch(id, authorityBhfId), name });
    const world = listing([
      {
        id: 'biz_n',
        branches: [
          named('br_cbd', '00', 'Nairobi CBD'),
          named('br_westlands', '01', 'Westlands'),
          // Its name is another branch's id and authorityBhfId: both are asked first.
          named('br_odd', '02', 'br_cbd'),
          named('br_depot', '03', '01'),
        ],
      },
    ]);
    const canonical = cachedCanonicalBranch(world.list, { now: world.now });
    expect(await canonical('biz_n', 'Nairobi CBD')).toBe('br_cbd');
    expect(await canonical('biz_n', '  nairobi cbd ')).toBe('br_cbd');
    expect(await canonical('biz_n', 'WESTLANDS')).toBe('br_westlands');
    expect(await canonical('biz_n', 'br_cbd')).toBe('br_cbd');
    expect(await canonical('biz_n', '01')).toBe('br_westlands');
    await expect(canonical('biz_n', 'Nairobi')).rejects.toMatchObject({ type: 'unknown_branch' });
    expect(world.state.reads).toBe(1);
  });

  it('never guesses between two branches whose names differ only in case or spacing, but takes an exact name', async () => {
    const world = listing([
      {
        id: 'biz_m',
        branches: [
          { ...branch('br_1', '00'), name: 'Main' },
          { ...branch('br_2', '01'), name: 'main ' },
          branch('br_3', '02'),
        ],
      },
    ]);
    const canonical = cachedCanonicalBranch(world.list, { now: world.now });
    expect(await canonical('biz_m', 'main ')).toBe('br_2');
    await expect(canonical('biz_m', 'MAIN')).rejects.toThrow(/no branch "MAIN"/);
  });

  it('refuses a business the key does not list, and keeps at most maxBusinesses', async () => {
    const world = listing([shop]);
    const canonical = cachedCanonicalBranch(world.list, { now: world.now, maxBusinesses: 1 });
    await expect(canonical('biz_z', undefined)).rejects.toThrow(
      /business biz_z has no first branch in the service's listing \(branch ids: none\)/,
    );
    expect(world.state.reads).toBe(1);
    // biz_z's empty entry pushed biz_a out: asked again, it is read again.
    expect(await canonical('biz_a', undefined)).toBe('br_main');
    expect(world.state.reads).toBe(2);
  });
});
