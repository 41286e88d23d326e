/**
 * A rolling restart during an outage of the compliance service: the worker running a sale goes away while every
 * compliance route answers 503, and the one replacing it must start all the same (its key's check waits in the
 * background). Once the service answers again, the sale is signed, exactly once.
 */
import { describe, expect, it } from 'vitest';
import { eventually, saleInput, useSaleHarness } from '../workflows/harness.js';

const h = useSaleHarness();

/** The requests of the worker's start-up check, not the sale's own. */
const STARTUP_ROUTES = new Set(['/v1/identity', '/v1/businesses']);

describe('a worker restarted during a compliance outage', () => {
  it(
    'starts, and the sale under way is signed exactly once when the service answers again',
    { timeout: 120_000 },
    async () => {
      const input = saleInput();
      const since = Date.now();
      const handle = await h.start(input);
      const outage = await h.sandbox.inspector.addFault({ service: 'compliance', kind: 'error', status: 503 });
      let down = true;
      try {
        // The sale is under way: its own calls meet the outage (and are retried) on the first worker.
        await eventually(
          () => h.sandbox.inspector.requestLog({ since, service: 'compliance' }),
          (log) => log.some((r) => !STARTUP_ROUTES.has(r.route) && r.status === 503),
          { timeoutMs: 30_000, what: "the sale's calls meeting the outage" },
        );
        const restarted = Date.now();
        await h.replaceWorkers();
        const log = await h.sandbox.inspector.requestLog({ since: restarted, service: 'compliance' });
        // The new worker's start-up check met the outage, and it started anyway.
        expect(log.some((r) => r.route === '/v1/identity' && r.status === 503)).toBe(true);
        expect((await handle.describe()).status.name).toBe('RUNNING');
        expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber })).toEqual([]);

        await h.sandbox.inspector.removeFault(outage.id!);
        down = false;
        const state = await handle.result();
        expect(state.sale?.status).toBe('completed');
        expect(state.submissions).toBe(1);
        const documents = await h.sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber });
        expect(documents).toHaveLength(1);
        expect(documents[0]?.sale.status).toBe('completed');
      } finally {
        if (down) await h.sandbox.inspector.removeFault(outage.id!);
      }
    },
  );
});
