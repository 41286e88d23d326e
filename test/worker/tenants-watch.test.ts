/**
 * The tenants file's watch loop on its own, and the actor that sets a served change's consequences: what it does when
 * acting fails (the Temporal server briefly unreachable while budgets or schedules are set). The services behind
 * LiveTenants are stood in for by a function that serves whatever it is given: the loop, not the directory, is under
 * test (the directory and the whole reload against the sandbox and a real server are test/services and
 * test/worker/tenants-live.test.ts).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { TenantsConfig } from '../../src/tenants/types.js';
import type { LiveTenants, TenantsChange } from '../../src/tenants/live.js';
import { watchTenants } from '../../src/tenants/watch.js';
import { tenantChangeActor } from '../../src/tenants/changes.js';
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
  it('hands each change served to onChange, once, in the order the file changed', async () => {
    let file = config(['biz_a']);
    const live = {
      replace: async (next: TenantsConfig) => changeAdding(next.compliance.at(-1)!.businesses!.at(-1)!),
    } as unknown as LiveTenants;
    const handed: string[] = [];
    const stop = watchTenants({
      live,
      reload: { load: () => file, intervalMs: 20 },
      served: file,
      onChange: (change) => handed.push(...change.businessesAdded),
      logger: pino({ level: 'silent' }),
    });
    try {
      file = config(['biz_a', 'biz_b']);
      await eventually(
        () => handed,
        (a) => a.length === 1,
        { timeoutMs: 5_000, intervalMs: 10, what: 'the change handed on' },
      );
      file = config(['biz_a', 'biz_b', 'biz_c']);
      await eventually(
        () => handed,
        (a) => a.length === 2,
        { timeoutMs: 5_000, intervalMs: 10, what: 'the next change handed on' },
      );
      // Several intervals with the file unchanged hand nothing more.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(handed).toEqual(['biz_b', 'biz_c']);
    } finally {
      await stop();
    }
  });
});

describe('tenantChangeActor', () => {
  it('acts again on a change whose acting failed, and on later changes behind it, in order', async () => {
    const changes = tenantChangeActor(pino({ level: 'silent' }), 20);
    const acted: string[] = [];
    let failuresLeft = 2;
    changes.later(changeAdding('biz_b'));
    changes.begin(async (change) => {
      if (failuresLeft > 0) {
        failuresLeft--;
        throw new Error('temporal unreachable');
      }
      acted.push(...change.businessesAdded);
    });
    changes.later(changeAdding('biz_c'));
    try {
      await eventually(
        () => acted,
        (a) => a.length === 2,
        { timeoutMs: 5_000, intervalMs: 10, what: 'both changes acted on' },
      );
      expect(acted).toEqual(['biz_b', 'biz_c']);
      expect(failuresLeft).toBe(0);
    } finally {
      await changes.stop();
    }
  });
});
