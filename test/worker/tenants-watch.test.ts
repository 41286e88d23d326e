/**
 * The tenants file's watch loop on its own: what it does when acting on a served change fails (the Temporal server
 * briefly unreachable while budgets or schedules are set). The services behind LiveTenants are stood in for by a
 * function that serves whatever it is given: the loop, not the directory, is under test (the directory and the
 * whole reload against the sandbox and a real server are test/services and test/worker/tenants-live.test.ts).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { TenantsConfig } from '../../src/tenants/types.js';
import type { LiveTenants, TenantsChange } from '../../src/tenants/live.js';
import { watchTenants } from '../../src/tenants/watch.js';
import { eventually } from '../helpers/eventually.js';

const config = (businesses: string[]): TenantsConfig =>
  ({
    compliance: [{ application: 'retail', businesses }],
    accounting: [],
    links: [],
    source: 'TENANTS_FILE test',
  }) as unknown as TenantsConfig;

const changeAdding = (business: string): TenantsChange => ({
  businessesAdded: [business],
  businessesRemoved: [],
  applicationsAdded: [],
  applicationsRemoved: [],
  businessesMoved: [],
});

describe('watchTenants', () => {
  it('acts again on a served change whose acting failed, at the next interval, and on later changes in order', async () => {
    let file = config(['biz_a']);
    const live = {
      replace: async (next: TenantsConfig) => changeAdding(next.compliance.at(-1)!.businesses!.at(-1)!),
    } as unknown as LiveTenants;
    const acted: string[] = [];
    let failuresLeft = 2;
    const stop = watchTenants({
      live,
      reload: { load: () => file, intervalMs: 20 },
      served: file,
      onChange: async (change) => {
        if (failuresLeft > 0) {
          failuresLeft--;
          throw new Error('temporal unreachable');
        }
        acted.push(...change.businessesAdded);
      },
      logger: pino({ level: 'silent' }),
    });
    try {
      file = config(['biz_a', 'biz_b']);
      // Failed twice, then acted on without the file changing again.
      await eventually(
        () => acted,
        (a) => a.length === 1,
        { timeoutMs: 5_000, intervalMs: 10, what: 'the change acted on' },
      );
      expect(acted).toEqual(['biz_b']);
      file = config(['biz_a', 'biz_b', 'biz_c']);
      await eventually(
        () => acted,
        (a) => a.length === 2,
        { timeoutMs: 5_000, intervalMs: 10, what: 'the next change acted on' },
      );
      expect(acted).toEqual(['biz_b', 'biz_c']);
    } finally {
      await stop();
    }
    expect(failuresLeft).toBe(0);
  });
});
