/**
 * A business that takes stock in has its purchases sync scheduled, sink or not: the sync is what tells the stock-in of
 * its invoices; a tenants file's stock-in settings follow its reloads. The Temporal client is stood in for by one that
 * records what it is asked (the schedules against a real server: test/purchases/schedules.test.ts).
 */
import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PurchasesConfig } from '../../src/config/purchases.js';
import { firstStockIn, loadStockIn } from '../../src/config/stock-in.js';
import { openLiveTenants, type LiveTenants, type TenantsChange } from '../../src/tenants/live.js';
import type { TenantsConfig } from '../../src/tenants/types.js';
import { watchTenants } from '../../src/tenants/watch.js';
import {
  purchasesBusinessIds,
  schedulePurchasesSync,
  setSchedulesPaused,
} from '../../src/purchases/served-schedules.js';
import { eventually } from '../helpers/eventually.js';

const logger = pino({ level: 'silent' });
const noSink: PurchasesConfig = { sink: undefined, intervalMs: 60_000, businessIds: undefined, listing: {} };
const fileSink: PurchasesConfig = {
  sink: { kind: 'file', path: '/dev/null' },
  intervalMs: 60_000,
  businessIds: undefined,
  listing: {},
};
const served = ['biz_a', 'biz_b', 'biz_c'];
const stockIn = loadStockIn({ STOCK_IN_BY_BUSINESS: 'biz_b=2025-01-01,biz_elsewhere=2025-01-01' });

/** Records each schedule made, and pauses or resumes schedules that exist (as `paused`). */
function recordingClient(existing: Record<string, boolean> = {}) {
  const created: Array<{ scheduleId: string; note: string | undefined }> = [];
  const changed: string[] = [];
  const client = {
    schedule: {
      create: async (options: { scheduleId: string; state?: { note?: string } }) => {
        created.push({ scheduleId: options.scheduleId, note: options.state?.note });
        return { trigger: async () => undefined };
      },
      getHandle: (scheduleId: string) => ({
        describe: async () => {
          const paused = existing[scheduleId];
          if (paused === undefined) throw Object.assign(new Error('not found'), { name: 'ScheduleNotFoundError' });
          return { state: { paused } };
        },
        pause: async () => void changed.push(`pause ${scheduleId}`),
        unpause: async () => void changed.push(`unpause ${scheduleId}`),
      }),
    },
  } as unknown as Client;
  return { client, created, changed };
}

describe('the businesses whose purchases are synced', () => {
  it('are, without a sink, those served that take stock in', () => {
    expect(purchasesBusinessIds(noSink, served, stockIn)).toEqual(['biz_b']);
    expect(purchasesBusinessIds(noSink, served)).toEqual([]);
  });

  it('are, with a sink, those it delivers for and those taking stock in, each once', () => {
    expect(purchasesBusinessIds(fileSink, served, stockIn)).toEqual(served);
    expect(purchasesBusinessIds({ ...fileSink, businessIds: ['biz_c'] }, served, stockIn)).toEqual(['biz_c', 'biz_b']);
    // STOCK_IN_FROM: every business served.
    expect(purchasesBusinessIds(noSink, served, loadStockIn({ STOCK_IN_FROM: '2025-01-01' }))).toEqual(served);
  });
});

describe('schedulePurchasesSync without a sink', () => {
  it('schedules the businesses that take stock in, with a note that says why', async () => {
    const { client, created } = recordingClient();
    const made = await schedulePurchasesSync({ client, served, config: noSink, stockIn, taskQueue: 'q', logger });
    expect(made.enabled).toBe(true);
    expect(made.schedules.map((s) => [s.businessId, s.outcome])).toEqual([['biz_b', 'created']]);
    expect(created).toEqual([
      {
        scheduleId: 'purchases-sync:q:biz_b',
        note: 'made by the worker (PURCHASES_SINK, or the business takes stock in)',
      },
    ]);
  });

  it('is off when no business served takes stock in', async () => {
    const { client, created } = recordingClient();
    const onlyElsewhere = loadStockIn({ STOCK_IN_BY_BUSINESS: 'biz_elsewhere=2025-01-01' });
    const made = await schedulePurchasesSync({ client, served, config: noSink, stockIn: onlyElsewhere, logger });
    expect(made).toEqual({ enabled: false, schedules: [] });
    expect(created).toEqual([]);
  });

  it('does not check PURCHASES_SYNC_BUSINESSES, which only chooses whom the sink gets', async () => {
    const { client } = recordingClient();
    const config = { ...noSink, businessIds: ['biz_unserved'] };
    await expect(schedulePurchasesSync({ client, served, config, stockIn, logger })).resolves.toMatchObject({
      enabled: true,
    });
  });
});

describe('setSchedulesPaused without a sink', () => {
  const existing = { 'purchases-sync:q:biz_a': false, 'purchases-sync:q:biz_b': true };

  it('pauses the purchases sync of a removed business, whatever made it', async () => {
    const { client, changed } = recordingClient(existing);
    await setSchedulesPaused({
      client,
      businessIds: ['biz_a'],
      paused: true,
      taskQueue: 'q',
      purchases: noSink,
      stockIn,
      logger,
    });
    expect(changed).toEqual(['pause purchases-sync:q:biz_a']);
  });

  it('resumes only the syncs of businesses that take stock in', async () => {
    const { client, changed } = recordingClient({ ...existing, 'purchases-sync:q:biz_a': true });
    const resume = { client, paused: false, taskQueue: 'q', purchases: noSink, stockIn, logger };
    await setSchedulesPaused({ ...resume, businessIds: ['biz_a', 'biz_b'] });
    expect(changed).toEqual(['unpause purchases-sync:q:biz_b']);
  });
});

describe('a tenants file whose stockIn list alone changed', () => {
  it('is a change: it is served as any other', async () => {
    const config = (from: string): TenantsConfig => ({
      compliance: [],
      accounting: [],
      links: [],
      stockIn: [{ businessId: 'biz_a', settings: { from, allOrNothing: false }, source: 'tenants.json: stockIn[0]' }],
      origin: 'TENANTS_FILE test',
    });
    let file = config('2025-01-01');
    const replaced: TenantsConfig[] = [];
    const live = {
      replace: async (next: TenantsConfig): Promise<TenantsChange> => {
        replaced.push(next);
        return {
          businessesAdded: [],
          businessesRemoved: [],
          businessesMoved: [],
          applicationsAdded: [],
          applicationsRemoved: [],
        };
      },
    } as unknown as LiveTenants;
    const stop = watchTenants({
      live,
      reload: { load: () => file, intervalMs: 10 },
      served: file,
      onChange: () => undefined,
      logger,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(replaced).toEqual([]);
      file = config('2025-02-01');
      await eventually(
        () => replaced,
        (r) => r.length === 1,
        { timeoutMs: 5_000, intervalMs: 10, what: 'the changed stockIn list served' },
      );
      expect(replaced[0]?.stockIn?.[0]?.settings.from).toBe('2025-02-01');
    } finally {
      await stop();
    }
  });
});

describe('the live tenants', () => {
  it('name the stock-in settings of the file served, and follow a reload', async () => {
    const config = (entries: Array<[string, string]>): TenantsConfig => ({
      compliance: [],
      accounting: [],
      links: [],
      stockIn: entries.map(([businessId, from], index) => ({
        businessId,
        settings: { from, allOrNothing: false },
        source: `tenants.json: stockIn[${index}] (${businessId})`,
      })),
      origin: 'TENANTS_FILE test',
    });
    const live = await openLiveTenants(config([['biz_a', '2025-01-01']]), { logger });
    try {
      expect(live.stockIn('biz_a')).toEqual({ from: '2025-01-01', allOrNothing: false });
      expect(live.stockIn('biz_b')).toBeUndefined();
      await live.replace(config([['biz_b', '2025-02-01']]));
      expect(live.stockIn('biz_a')).toBeUndefined();
      expect(live.stockIn('biz_b')).toEqual({ from: '2025-02-01', allOrNothing: false });
      // The environment's settings stand for the businesses the file does not name.
      const of = firstStockIn(live.stockIn, loadStockIn({ STOCK_IN_BY_BUSINESS: 'biz_b=2024-01-01,biz_c=2024-01-01' }));
      expect([of('biz_a'), of('biz_b')?.from, of('biz_c')?.from]).toEqual([undefined, '2025-02-01', '2024-01-01']);
    } finally {
      await live.close();
    }
  });
});
