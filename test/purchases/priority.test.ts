import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { saleInput } from '../workflows/sale-stack.js';
import { DEMO, usePurchasesStack } from './harness.js';
import { activityWaits } from './waits.js';

const BACKLOG = 50;
const isPurchases = (route: string) => route.startsWith('/v1/purchases');

// A compliance budget of 2 activities per second for the whole fleet. The sandbox's own limit is raised so the
// order of requests shows what Temporal dispatched, not the sandbox's 429s.
const stack = usePurchasesStack(() => ({
  fixture: fastFixture((f) => {
    f.applications = (f.applications ?? []).map((a) => ({ ...a, requestsPerMinute: 6_000 }));
  }),
  activitiesPerSecond: 2,
  sink: async () => ({ description: 'discard', deliver: async () => {}, close: async () => {} }),
}));

describe('priority on the shared compliance budget', () => {
  it("a till sale's calls go before a purchases backlog queued ahead of them", { timeout: 120_000 }, async () => {
    await stack.firstSync();
    const handles: WorkflowHandle[] = [];
    try {
      // Fifty syncs at once: fifty pulls queued on the compliance queue, each followed by its page.
      for (let i = 0; i < BACKLOG; i++) {
        handles.push(
          await stack.client.workflow.start('purchasesSyncWorkflow', {
            taskQueue: stack.taskQueue,
            workflowId: `purchases-backlog-${i}-${randomUUID().slice(0, 8)}`,
            args: [{ businessId: DEMO.businesses.nairobi }],
          }),
        );
      }
      const since = Date.now();
      const log = () => stack.sandbox.inspector.requestLog({ since, service: 'compliance' });
      // The backlog is being drained, two calls a second.
      await eventually(log, (records) => records.filter((r) => isPurchases(r.route)).length >= 4, {
        what: 'the backlog draining',
        timeoutMs: 30_000,
      });

      const saleStart = Date.now();
      const input = saleInput();
      const sale = await stack.client.workflow.start('saleWorkflow', {
        taskQueue: stack.taskQueue,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      });
      handles.push(sale);
      const records = await eventually(log, (rs) => rs.some((r) => r.method === 'POST' && r.route === '/v1/sales'), {
        what: "the sale's POST /v1/sales",
        timeoutMs: 60_000,
      });
      const signedAt = records.findIndex((r) => r.method === 'POST' && r.route === '/v1/sales');
      const upToSigning = records.slice(0, signedAt);
      const purchasesBetween = upToSigning.filter((r) => r.at >= saleStart && isPurchases(r.route)).length;
      const pullsWaiting = BACKLOG - upToSigning.filter((r) => r.route === '/v1/purchases/pull').length;

      const waits = await activityWaits(sale, ['signSale']);
      console.info(
        `sale: ${purchasesBetween} purchases calls between its start and its signing request; ${pullsWaiting} queued pulls still waiting; waits (ms) ${JSON.stringify(waits)}`,
      );
      // In arrival order the sale would have waited behind every pull queued before it (about 45); by priority its
      // calls go next, and most of the backlog is still waiting when it is signed.
      expect(purchasesBetween).toBeLessThanOrEqual(8);
      expect(pullsWaiting).toBeGreaterThanOrEqual(30);
    } finally {
      await Promise.all(handles.map((h) => h.terminate('test over').catch(() => undefined)));
    }
  });
});
