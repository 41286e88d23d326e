import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../src/accounting/client.js';
import { webhookHeaders } from '../../src/accounting/webhooks.js';
import { startCallbackServer, type CallbackServer } from '../../src/callbacks/server.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  defaultAccountingFixture,
} from '../../sandbox/accounting/default-fixture.js';
import type { WebhookAttempt } from '../../sandbox/accounting/webhooks.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { syncBatchWorkflowId, type SyncBatchWebhookHint } from '../../src/contracts/sync-batch.js';
import { receivedWebhooksQuery, type syncBatchWebhookRecorder } from '../fixtures/workflows/sync-batch-webhook-recorder.js';
import { eventually } from '../helpers/eventually.js';
import { useTestWorker } from '../helpers/test-worker.js';
import { memoryLogger } from './helpers.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/sync-batch-webhook-recorder.ts', import.meta.url));
const SECRET = DEMO_ACCOUNTING_WEBHOOK_SECRET;
const OTHER_SECRET = `whsec_${Buffer.from(`another-secret-${randomUUID()}`).toString('base64')}`;
const run = randomUUID().slice(0, 8);

/**
 * The accounting webhook receiver (A23) on the real callback server: verified webhooks signal the workflow
 * `sync-batch:<id>` (a recorder stands in for it here); forged, stale, replayed and malformed ones change nothing.
 */
describe('accounting webhook receiver', () => {
  const logs = memoryLogger();
  const { client, taskQueue } = useTestWorker(workflowsPath, 'acct-webhooks');
  let server: CallbackServer;
  let url: string;
  const sentSignatures: string[] = [];

  beforeAll(async () => {
    server = await startCallbackServer({
      host: '127.0.0.1',
      port: 0,
      minter: new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret: `unused-${randomUUID()}-${randomUUID()}` }),
      client,
      logger: logs.logger,
      accountingWebhookSecret: SECRET,
    });
    url = `${server.url}/webhooks/accounting`;
  });
  afterAll(async () => {
    await server?.close();
  });

  async function startRecorder(syncBatchId: string): Promise<WorkflowHandle<typeof syncBatchWebhookRecorder>> {
    return client.workflow.start<typeof syncBatchWebhookRecorder>('syncBatchWebhookRecorder', { taskQueue, workflowId: syncBatchWorkflowId(syncBatchId) });
  }

  // The same arguments give the same bytes: a case that signs one body and posts another would fail only when
  // the clock ticked between the two calls.
  const eventTime = new Date().toISOString();
  function body(syncBatchId: string, billPaymentId = 'bp_1', status = 'synced'): string {
    return JSON.stringify({ type: 'bill_payment.sync_status_changed', timestamp: eventTime, data: { syncBatchId, billPaymentId, status, previousStatus: 'syncing' } });
  }

  function signed(rawBody: string, options: { id?: string; timestamp?: number; secret?: string } = {}): Record<string, string> {
    const headers = webhookHeaders({
      secret: options.secret ?? SECRET,
      id: options.id ?? `msg_${randomUUID()}`,
      timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
      rawBody,
    });
    sentSignatures.push(headers['webhook-signature']!);
    return headers;
  }

  async function post(rawBody: string, headers: Record<string, string>): Promise<{ status: number; json: unknown }> {
    const response = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: rawBody });
    return { status: response.statusCode, json: await response.body.json() };
  }

  async function hints(handle: WorkflowHandle): Promise<SyncBatchWebhookHint[]> {
    return handle.query(receivedWebhooksQuery);
  }

  it('signals the sync batch workflow for a valid webhook (202 accepted)', async () => {
    const batch = `sb_valid_${run}`;
    const handle = await startRecorder(batch);
    try {
      const raw = body(batch, 'bp_7', 'synced');
      const headers = signed(raw);
      expect(await post(raw, headers)).toEqual({ status: 202, json: { status: 'accepted' } });
      expect(await hints(handle)).toEqual([{ webhookId: headers['webhook-id'], billPaymentId: 'bp_7', status: 'synced' }]);
    } finally {
      await handle.terminate();
    }
  });

  it('answers forged, stale, replayed and malformed webhooks without signalling', async () => {
    const batch = `sb_refused_${run}`;
    const handle = await startRecorder(batch);
    try {
      const raw = body(batch);
      const first = signed(raw);
      expect((await post(raw, first)).status).toBe(202);
      const now = Math.floor(Date.now() / 1000);
      const cases: Array<[string, string, Record<string, string>, number, unknown]> = [
        ['replayed as sent', raw, first, 200, { status: 'duplicate' }],
        ['replayed, re-signed with a fresh timestamp', raw, signed(raw, { id: first['webhook-id']! }), 200, { status: 'duplicate' }],
        ['forged: another secret', body(batch, 'bp_2'), signed(body(batch, 'bp_2'), { secret: OTHER_SECRET }), 401, { error: { code: 'invalid_signature', message: expect.any(String) } }],
        ['forged: body changed after signing', body(batch, 'bp_3'), signed(body(batch, 'bp_4')), 401, { error: { code: 'invalid_signature', message: expect.any(String) } }],
        ['unsigned', body(batch, 'bp_5'), {}, 401, { error: { code: 'missing_signature', message: expect.any(String) } }],
        ['stale: ten minutes old', body(batch, 'bp_6'), signed(body(batch, 'bp_6'), { timestamp: now - 600 }), 401, { error: { code: 'stale_timestamp', message: expect.any(String) } }],
        ['stale: ten minutes ahead', body(batch, 'bp_6'), signed(body(batch, 'bp_6'), { timestamp: now + 600 }), 401, { error: { code: 'stale_timestamp', message: expect.any(String) } }],
        ['malformed: not JSON', 'not json', signed('not json'), 400, { error: { code: 'malformed_payload', message: expect.any(String) } }],
        ['malformed: names no batch', '{"type":"x","data":{}}', signed('{"type":"x","data":{}}'), 400, { error: { code: 'missing_sync_batch_id', message: expect.any(String) } }],
        [
          'malformed: timestamp not in seconds',
          body(batch, 'bp_8'),
          { ...signed(body(batch, 'bp_8')), 'webhook-timestamp': 'yesterday' },
          400,
          { error: { code: 'malformed_timestamp', message: expect.any(String) } },
        ],
      ];
      for (const [what, rawBody, headers, status, json] of cases) {
        expect(await post(rawBody, headers), what).toEqual({ status, json });
      }
      // Signals arrive in order: one valid webhook after all of the above shows none of them was signalled.
      const last = signed(body(batch, 'bp_9'));
      expect((await post(body(batch, 'bp_9'), last)).status).toBe(202);
      const received = await hints(handle);
      expect(received.map((h) => h.webhookId)).toEqual([first['webhook-id'], last['webhook-id']]);
      // A malformed webhook's id was not taken: the sender may fix and resend it.
    } finally {
      await handle.terminate();
    }
  });

  it('acknowledges a webhook for a batch with no running workflow (202 ignored)', async () => {
    const raw = body(`sb_never_started_${run}`);
    expect(await post(raw, signed(raw))).toEqual({ status: 202, json: { status: 'ignored' } });
  });

  it('is not served without an accounting webhook secret', async () => {
    const bare = await startCallbackServer({
      host: '127.0.0.1',
      port: 0,
      minter: new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret: `unused-${randomUUID()}-${randomUUID()}` }),
      client,
      logger: logs.logger,
    });
    try {
      const raw = body(`sb_x_${run}`);
      const response = await request(`${bare.url}/webhooks/accounting`, { method: 'POST', headers: signed(raw), body: raw });
      expect(response.statusCode).toBe(404);
      await response.body.dump();
    } finally {
      await bare.close();
    }
  });

  describe('from the accounting sandbox', () => {
    let sandbox: Sandbox;
    let accounting: AccountingClient;
    const batchId = `sb_e2e_${run}`;
    const billPaymentIds = defaultAccountingFixture.billPayments.filter((b) => b.companyId === 'cmp_demo_nairobi').slice(0, 2).map((b) => b.id);

    beforeAll(async () => {
      sandbox = await startSandbox({
        logger: false,
        fixture: {
          accounting: {
            ...defaultAccountingFixture,
            processingDelayMs: 200,
            webhooks: { retryScheduleMs: [0, 200, 400], timeoutMs: 2_000, outOfOrderHoldMs: 300 },
            applications: defaultAccountingFixture.applications.map((a) => (a.id === 'app_demo' ? { ...a, webhookUrl: url } : a)),
            syncBatches: [{ id: batchId, companyId: 'cmp_demo_nairobi', billPaymentIds }],
          },
        },
      });
      accounting = new AccountingClient({ baseUrl: sandbox.accountingUrl, apiKey: DEMO_ACCOUNTING_API_KEY, clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET });
    });
    afterAll(async () => {
      await accounting?.close();
      await sandbox?.close();
    });

    it("signals every status change of the sandbox's signed webhooks once; duplicates are answered 200", async () => {
      sandbox.faults.add({ service: 'accounting', kind: 'callback-duplicate', duplicates: 2 });
      const handle = await startRecorder(batchId);
      try {
        await accounting.processSyncBatch(batchId);
        const received = await eventually(() => hints(handle), (h) => h.length >= 4, { timeoutMs: 10_000, what: 'four webhook signals' });
        expect(received.map((h) => `${h.billPaymentId}:${h.status}`).sort()).toEqual(billPaymentIds.flatMap((id) => [`${id}:synced`, `${id}:syncing`]).sort());
        const attempts = await eventually(
          async () => ((await (await fetch(`${sandbox.accountingUrl}/__sandbox/webhooks?syncBatchId=${batchId}`)).json()) as { attempts: WebhookAttempt[] }).attempts,
          (a) => a.filter((x) => x.kind === 'duplicate').length === 8,
          { timeoutMs: 10_000, what: 'duplicate sends' },
        );
        expect(attempts.filter((a) => a.kind === 'scheduled').map((a) => a.responseStatus)).toEqual([202, 202, 202, 202]);
        expect(new Set(attempts.filter((a) => a.kind === 'duplicate').map((a) => a.responseStatus))).toEqual(new Set([200]));
        expect(await hints(handle)).toHaveLength(4);
      } finally {
        sandbox.faults.clear();
        await handle.terminate();
      }
    });
  });

  it('never logs the secret or a signature', () => {
    const text = logs.text();
    expect(sentSignatures.length).toBeGreaterThan(5);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET.slice('whsec_development_'.length));
    for (const signature of sentSignatures) expect(text).not.toContain(signature.slice(3));
    expect(logs.lines().some((line) => line.msg === 'accounting webhook signalled to the sync batch workflow')).toBe(true);
    expect(logs.lines().some((line) => line.msg === 'accounting webhook refused')).toBe(true);
  });
});
