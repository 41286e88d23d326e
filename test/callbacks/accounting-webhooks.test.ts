import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { AccountingClient } from '../../src/accounting/client.js';
import { webhookHeaders } from '../../src/accounting/webhooks.js';
import {
  accountingWebhookPath,
  accountingWebhookRoutes,
  syncBatchSignaller,
} from '../../src/callbacks/accounting-webhooks.js';
import { startCallbackServer, type CallbackServer } from '../../src/callbacks/server.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import type { AccountingTenant, ComplianceTenant, TenantsConfig } from '../../src/tenants/types.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { startCallbacks } from '../../src/callbacks/start.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  OTHER_ACCOUNTING_CLIENT_SECRET,
  OTHER_COMPANY_ID,
  defaultAccountingFixture,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { WebhookAttempt } from '../../sandbox/accounting/webhooks.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { syncBatchWorkflowId, type SyncBatchWebhookHint } from '../../src/contracts/sync-batch.js';
import {
  receivedWebhooksQuery,
  type syncBatchWebhookRecorder,
} from '../fixtures/workflows/sync-batch-webhook-recorder.js';
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
      minter: new CallbackUrlMinter({
        publicBaseUrl: 'http://127.0.0.1',
        secret: `unused-${randomUUID()}-${randomUUID()}`,
      }),
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
    return client.workflow.start<typeof syncBatchWebhookRecorder>('syncBatchWebhookRecorder', {
      taskQueue,
      workflowId: syncBatchWorkflowId(syncBatchId),
    });
  }

  // The same arguments give the same bytes: a case that signs one body and posts another would fail only when
  // the clock ticked between the two calls.
  const eventTime = new Date().toISOString();
  function body(syncBatchId: string, billPaymentId = 'bp_1', status = 'synced'): string {
    return JSON.stringify({
      type: 'bill_payment.sync_status_changed',
      timestamp: eventTime,
      data: { syncBatchId, billPaymentId, status, previousStatus: 'syncing' },
    });
  }

  function signed(
    rawBody: string,
    options: { id?: string; timestamp?: number; secret?: string } = {},
  ): Record<string, string> {
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
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: rawBody,
    });
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
      expect(await hints(handle)).toEqual([
        { webhookId: headers['webhook-id'], billPaymentId: 'bp_7', status: 'synced' },
      ]);
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
        [
          'replayed, re-signed with a fresh timestamp',
          raw,
          signed(raw, { id: first['webhook-id']! }),
          200,
          { status: 'duplicate' },
        ],
        [
          'forged: another secret',
          body(batch, 'bp_2'),
          signed(body(batch, 'bp_2'), { secret: OTHER_SECRET }),
          401,
          { error: { code: 'invalid_signature', message: expect.any(String) } },
        ],
        [
          'forged: body changed after signing',
          body(batch, 'bp_3'),
          signed(body(batch, 'bp_4')),
          401,
          { error: { code: 'invalid_signature', message: expect.any(String) } },
        ],
        [
          'unsigned',
          body(batch, 'bp_5'),
          {},
          401,
          { error: { code: 'missing_signature', message: expect.any(String) } },
        ],
        [
          'stale: ten minutes old',
          body(batch, 'bp_6'),
          signed(body(batch, 'bp_6'), { timestamp: now - 600 }),
          401,
          { error: { code: 'stale_timestamp', message: expect.any(String) } },
        ],
        [
          'stale: ten minutes ahead',
          body(batch, 'bp_6'),
          signed(body(batch, 'bp_6'), { timestamp: now + 600 }),
          401,
          { error: { code: 'stale_timestamp', message: expect.any(String) } },
        ],
        [
          'malformed: not JSON',
          'not json',
          signed('not json'),
          400,
          { error: { code: 'malformed_payload', message: expect.any(String) } },
        ],
        [
          'malformed: names no batch',
          '{"type":"x","data":{}}',
          signed('{"type":"x","data":{}}'),
          400,
          { error: { code: 'missing_sync_batch_id', message: expect.any(String) } },
        ],
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
      minter: new CallbackUrlMinter({
        publicBaseUrl: 'http://127.0.0.1',
        secret: `unused-${randomUUID()}-${randomUUID()}`,
      }),
      client,
      logger: logs.logger,
    });
    try {
      const raw = body(`sb_x_${run}`);
      const response = await request(`${bare.url}/webhooks/accounting`, {
        method: 'POST',
        headers: signed(raw),
        body: raw,
      });
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
    const billPaymentIds = defaultAccountingFixture.billPayments
      .filter((b) => b.companyId === 'cmp_demo_nairobi')
      .slice(0, 2)
      .map((b) => b.id);

    beforeAll(async () => {
      sandbox = await startSandbox({
        logger: false,
        fixture: {
          accounting: {
            ...defaultAccountingFixture,
            processingDelayMs: 200,
            webhooks: { retryScheduleMs: [0, 200, 400], timeoutMs: 2_000, outOfOrderHoldMs: 300 },
            applications: defaultAccountingFixture.applications.map((a) =>
              a.id === 'app_demo' ? { ...a, webhookUrl: url } : a,
            ),
            syncBatches: [{ id: batchId, companyId: 'cmp_demo_nairobi', billPaymentIds }],
          },
        },
      });
      accounting = new AccountingClient({
        baseUrl: sandbox.accountingUrl,
        apiKey: DEMO_ACCOUNTING_API_KEY,
        clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
      });
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
        const received = await eventually(
          () => hints(handle),
          (h) => h.length >= 4,
          { timeoutMs: 10_000, what: 'four webhook signals' },
        );
        expect(received.map((h) => `${h.billPaymentId}:${h.status}`).sort()).toEqual(
          billPaymentIds.flatMap((id) => [`${id}:synced`, `${id}:syncing`]).sort(),
        );
        const attempts = await eventually(
          async () =>
            (
              (await (await fetch(`${sandbox.accountingUrl}/__sandbox/webhooks?syncBatchId=${batchId}`)).json()) as {
                attempts: WebhookAttempt[];
              }
            ).attempts,
          (a) => a.filter((x) => x.kind === 'duplicate').length === 8,
          { timeoutMs: 10_000, what: 'duplicate sends' },
        );
        expect(attempts.filter((a) => a.kind === 'scheduled').map((a) => a.responseStatus)).toEqual([
          202, 202, 202, 202,
        ]);
        expect(new Set(attempts.filter((a) => a.kind === 'duplicate').map((a) => a.responseStatus))).toEqual(
          new Set([200]),
        );
        expect(await hints(handle)).toHaveLength(4);
      } finally {
        sandbox.faults.clear();
        await handle.terminate();
      }
    });
  });

  /**
   * Accounting applications with different webhook secrets (a tenants file): each application's deliveries arrive
   * at its own path and are verified with its own secret only.
   */
  describe('per accounting application', () => {
    const booksA = { application: 'books-a', secret: SECRET };
    const booksB = { application: 'books-b', secret: OTHER_SECRET };

    async function postTo(
      target: string,
      rawBody: string,
      headers: Record<string, string>,
    ): Promise<{ status: number; json: unknown }> {
      const response = await request(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: rawBody,
      });
      return { status: response.statusCode, json: await response.body.json() };
    }

    describe('the receiver', () => {
      let app: FastifyInstance;
      let base: string;

      beforeAll(async () => {
        app = Fastify({ logger: false });
        await app.register(accountingWebhookRoutes, {
          applications: [booksA, booksB],
          signal: syncBatchSignaller(client),
          logger: logs.logger,
        });
        base = await app.listen({ host: '127.0.0.1', port: 0 });
      });
      afterAll(async () => {
        await app?.close();
      });

      it("accepts a delivery for application A signed with A's secret, and refuses one signed with B's secret", async () => {
        const batch = `sb_app_a_${run}`;
        const handle = await startRecorder(batch);
        try {
          const forged = body(batch, 'bp_b_for_a');
          expect(
            await postTo(
              `${base}${accountingWebhookPath('books-a')}`,
              forged,
              signed(forged, { secret: booksB.secret }),
            ),
          ).toEqual({
            status: 401,
            json: { error: { code: 'invalid_signature', message: expect.any(String) } },
          });
          const genuine = body(batch, 'bp_a_for_a');
          const headers = signed(genuine, { secret: booksA.secret });
          expect(await postTo(`${base}${accountingWebhookPath('books-a')}`, genuine, headers)).toEqual({
            status: 202,
            json: { status: 'accepted' },
          });
          // Signals arrive in order: only the genuine delivery was signalled.
          expect(await hints(handle)).toEqual([
            { webhookId: headers['webhook-id'], billPaymentId: 'bp_a_for_a', status: 'synced' },
          ]);
        } finally {
          await handle.terminate();
        }
      });

      it("accepts B's own deliveries at B's path, and keeps each application's webhook ids apart", async () => {
        const batch = `sb_app_b_${run}`;
        const handle = await startRecorder(batch);
        try {
          const id = `msg_shared_${run}`;
          const forA = body(batch, 'bp_1', 'syncing');
          expect(
            (
              await postTo(
                `${base}${accountingWebhookPath('books-a')}`,
                forA,
                signed(forA, { secret: booksA.secret, id }),
              )
            ).status,
          ).toBe(202);
          // The same id from another application is another delivery, not a replay.
          const forB = body(batch, 'bp_2', 'synced');
          expect(
            await postTo(
              `${base}${accountingWebhookPath('books-b')}`,
              forB,
              signed(forB, { secret: booksB.secret, id }),
            ),
          ).toEqual({ status: 202, json: { status: 'accepted' } });
          expect(
            await postTo(
              `${base}${accountingWebhookPath('books-b')}`,
              forB,
              signed(forB, { secret: booksB.secret, id }),
            ),
          ).toEqual({ status: 200, json: { status: 'duplicate' } });
          expect((await hints(handle)).map((h) => h.billPaymentId)).toEqual(['bp_1', 'bp_2']);
        } finally {
          await handle.terminate();
        }
      });

      it('refuses a path of no application (404), and serves no bare path without its one secret', async () => {
        const raw = body(`sb_nobody_${run}`);
        expect(await postTo(`${base}${accountingWebhookPath('books-c')}`, raw, signed(raw))).toEqual({
          status: 404,
          json: { error: { code: 'unknown_application', message: expect.any(String) } },
        });
        const bare = await request(`${base}/webhooks/accounting`, { method: 'POST', headers: signed(raw), body: raw });
        expect(bare.statusCode).toBe(404);
        await bare.body.dump();
      });

      it('refuses to start with a malformed secret, naming the application and not the value', async () => {
        const bad = Fastify({ logger: false });
        try {
          await expect(
            bad
              .register(accountingWebhookRoutes, {
                applications: [{ application: 'books-x', secret: 'whsec_not base64!' }],
                signal: syncBatchSignaller(client),
              })
              .ready(),
          ).rejects.toThrow(/accounting application books-x: webhookSecret/);
        } finally {
          await bad.close().catch(() => undefined);
        }
      });
    });

    describe("a tenants worker's receiver (startCallbacks), fed by the accounting sandbox", () => {
      let sandbox: Sandbox;
      let receiver: CallbackServer;
      let tenants: TenantsConfig;
      const otherBilled = defaultAccountingFixture.billPayments
        .filter((b) => b.companyId === OTHER_COMPANY_ID)
        .slice(0, 1)
        .map((b) => b.id);
      const demoBilled = defaultAccountingFixture.billPayments
        .filter((b) => b.companyId === 'cmp_demo_nairobi')
        .slice(2, 3)
        .map((b) => b.id);
      const batches = { a: `sb_tenant_a_${run}`, b: `sb_tenant_b_${run}` };

      function accountingTenant(
        application: string,
        apiKey: string,
        clientSecret: string,
        webhookSecret: string,
      ): AccountingTenant {
        const service = {
          baseUrl: sandbox.accountingUrl,
          apiKey,
          clientSecret,
          clientId: undefined,
          webhookSecret,
          signRequests: true,
          signQuery: false,
          timeoutMs: 5_000,
        };
        return { application, service, source: `tenants.json: accounting (${application})` };
      }

      beforeAll(async () => {
        sandbox = await startSandbox({
          logger: false,
          fixture: {
            accounting: {
              ...defaultAccountingFixture,
              processingDelayMs: 200,
              webhooks: { retryScheduleMs: [0, 200, 400], timeoutMs: 2_000, outOfOrderHoldMs: 300 },
              // Each application signs with its own secret.
              applications: defaultAccountingFixture.applications.map((a) =>
                a.id === 'app_other' ? { ...a, webhookSecret: booksB.secret } : a,
              ),
              syncBatches: [
                { id: batches.a, companyId: 'cmp_demo_nairobi', billPaymentIds: demoBilled },
                { id: batches.b, companyId: OTHER_COMPANY_ID, billPaymentIds: otherBilled },
              ],
            },
          },
        });
        const otherKey = sandbox.fixture.accounting.applications.find((a) => a.id === 'app_other')!.apiKeys[0]!;
        const shop: ComplianceTenant = {
          application: 'shop',
          service: {
            baseUrl: sandbox.complianceUrl,
            apiKey: DEMO.keys.orgWide,
            businessId: undefined,
            timeoutMs: 5_000,
            allowLoopbackCallbacks: true,
          },
          requestsPerMinute: 120,
          businesses: undefined,
          source: 'tenants.json: compliance (shop)',
        };
        tenants = {
          compliance: [shop],
          accounting: [
            accountingTenant(booksA.application, DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET, booksA.secret),
            accountingTenant(booksB.application, otherKey, OTHER_ACCOUNTING_CLIENT_SECRET, booksB.secret),
          ],
          links: [],
          origin: 'tenants.json',
        };
        const started = await startCallbacks({ client, logger: logs.logger }, loadWorkerConfig({}), tenants);
        if (!started) throw new Error('no receiver was started for tenants on a loopback sandbox');
        receiver = started.server;
        await sandbox.inspector.setAccountingWebhookEndpoint(
          'app_demo',
          `${receiver.url}${accountingWebhookPath(booksA.application)}`,
        );
        await sandbox.inspector.setAccountingWebhookEndpoint(
          'app_other',
          `${receiver.url}${accountingWebhookPath(booksB.application)}`,
        );
      });
      afterAll(async () => {
        await receiver?.close();
        await sandbox?.close();
      });

      it('serves a path per application and no bare path when the secrets differ', async () => {
        const raw = body(`sb_bare_${run}`);
        const bare = await request(`${receiver.url}/webhooks/accounting`, {
          method: 'POST',
          headers: signed(raw),
          body: raw,
        });
        expect(bare.statusCode).toBe(404);
        await bare.body.dump();
        expect(
          await postTo(
            `${receiver.url}${accountingWebhookPath(booksA.application)}`,
            raw,
            signed(raw, { secret: booksB.secret }),
          ),
        ).toMatchObject({ status: 401 });
      });

      it("signals each application's batches from its own signed webhooks", async () => {
        const [handleA, handleB] = await Promise.all([startRecorder(batches.a), startRecorder(batches.b)]);
        const booksAClient = new AccountingClient({
          baseUrl: sandbox.accountingUrl,
          apiKey: DEMO_ACCOUNTING_API_KEY,
          clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
        });
        const booksBClient = new AccountingClient(tenants.accounting[1]!.service);
        try {
          await booksAClient.processSyncBatch(batches.a);
          await booksBClient.processSyncBatch(batches.b);
          const expected = (ids: string[]) => ids.flatMap((id) => [`${id}:synced`, `${id}:syncing`]).sort();
          const receivedA = await eventually(
            () => hints(handleA),
            (h) => h.length >= 2,
            { timeoutMs: 10_000, what: "books-a's two webhook signals" },
          );
          const receivedB = await eventually(
            () => hints(handleB),
            (h) => h.length >= 2,
            { timeoutMs: 10_000, what: "books-b's two webhook signals" },
          );
          expect(receivedA.map((h) => `${h.billPaymentId}:${h.status}`).sort()).toEqual(expected(demoBilled));
          expect(receivedB.map((h) => `${h.billPaymentId}:${h.status}`).sort()).toEqual(expected(otherBilled));
          for (const batch of [batches.a, batches.b]) {
            const attempts = (
              (await (await fetch(`${sandbox.accountingUrl}/__sandbox/webhooks?syncBatchId=${batch}`)).json()) as {
                attempts: WebhookAttempt[];
              }
            ).attempts;
            expect(
              attempts.filter((a) => a.kind === 'scheduled').map((a) => a.responseStatus),
              batch,
            ).toEqual([202, 202]);
          }
        } finally {
          await booksAClient.close();
          await booksBClient.close();
          await handleA.terminate();
          await handleB.terminate();
        }
      });
    });
  });

  it('never logs the secret or a signature', () => {
    const text = logs.text();
    expect(sentSignatures.length).toBeGreaterThan(5);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET.slice('whsec_development_'.length));
    expect(text).not.toContain(OTHER_SECRET.slice('whsec_'.length));
    for (const signature of sentSignatures) expect(text).not.toContain(signature.slice(3));
    expect(logs.lines().some((line) => line.msg === 'accounting webhook signalled to the sync batch workflow')).toBe(
      true,
    );
    expect(logs.lines().some((line) => line.msg === 'accounting webhook refused')).toBe(true);
  });
});
