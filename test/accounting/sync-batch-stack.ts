/**
 * A real sync-batch stack for one test file: the sandbox over HTTP, a workflow worker bundling
 * workflows/sync-batch.ts on its own task queue of the run's shared dev server, the accounting worker on the
 * derived queue, and the real receiver (callback server with accounting webhooks).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { pino } from 'pino';
import { AccountingClient } from '../../src/accounting/client.js';
import { createAccountingActivities } from '../../activities/accounting.js';
import { accountingTaskQueue } from '../../src/contracts/task-queues.js';
import { singleApplication } from '../helpers/single-application.js';
import { startCallbackServer, type CallbackServer } from '../../src/callbacks/server.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { SyncBatchClient } from '../../src/client/sync-batches.js';
import { recordingMetrics } from '../helpers/metrics.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
} from '../../sandbox/accounting/default-fixture.js';
import type { AccountingFixtureInput } from '../../sandbox/accounting/fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';

const syncBatchWorkflowsPath = fileURLToPath(new URL('../../workflows/sync-batch.ts', import.meta.url));

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** workflows/sync-batch.ts bundled once per test file (the lead wires it into workflows/index.ts later). */
export function syncBatchBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: syncBatchWorkflowsPath, logger: testLogger });
  return bundle;
}

export interface WorkerPair {
  taskQueue: string;
  syncBatches: SyncBatchClient;
  close(): Promise<void>;
}

/** A workflow worker and an accounting worker (with its own accounting client) on a fresh task queue. */
export async function startWorkerPair(
  accountingUrl: string,
  options: { clientSecret?: string; activitiesPerSecond?: number } = {},
): Promise<WorkerPair> {
  const env = await getTestEnv();
  const namespace = env.namespace ?? 'default';
  const taskQueue = uniqueTaskQueue('sync-batch');
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const accounting = new AccountingClient({
    baseUrl: accountingUrl,
    apiKey: DEMO_ACCOUNTING_API_KEY,
    clientSecret: options.clientSecret ?? DEMO_ACCOUNTING_CLIENT_SECRET,
  });
  const workflows = await Worker.create({
    connection: env.nativeConnection,
    namespace,
    taskQueue,
    workflowBundle: await syncBatchBundle(),
    sinks: recordingMetrics().sinks(),
  });
  const accountingWorker = await Worker.create({
    connection: env.nativeConnection,
    namespace,
    taskQueue: accountingTaskQueue(taskQueue),
    activities: createAccountingActivities({ services: singleApplication({ accounting }), logger }),
    maxTaskQueueActivitiesPerSecond: options.activitiesPerSecond ?? 50,
  });
  const running = Promise.all([workflows.run(), accountingWorker.run()]);
  return {
    taskQueue,
    syncBatches: new SyncBatchClient(env.client, { taskQueue }),
    async close() {
      workflows.shutdown();
      accountingWorker.shutdown();
      await running;
      await accounting.close();
    },
  };
}

export interface SyncBatchStack extends WorkerPair {
  sandbox: Sandbox;
  client: Client;
  /** The receiver's accounting webhook URL. */
  webhookUrl: string;
  receiver: CallbackServer;
  /** Points the demo application's webhooks at the receiver (true) or stops them (false). */
  webhooks(on: boolean): Promise<void>;
}

export async function startSyncBatchStack(accounting: AccountingFixtureInput): Promise<SyncBatchStack> {
  const env = await getTestEnv();
  const sandbox = await startSandbox({ fixture: { accounting }, logger: false });
  const pair = await startWorkerPair(sandbox.accountingUrl);
  const receiver = await startCallbackServer({
    host: '127.0.0.1',
    port: 0,
    // Compliance callbacks are not used here; the receiver needs a verifier all the same.
    minter: new CallbackUrlMinter({
      publicBaseUrl: 'http://127.0.0.1',
      secret: `unused-${randomUUID()}-${randomUUID()}`,
    }),
    client: env.client,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    accountingWebhookSecret: DEMO_ACCOUNTING_WEBHOOK_SECRET,
  });
  const webhookUrl = `${receiver.url}/webhooks/accounting`;
  return {
    ...pair,
    sandbox,
    client: env.client,
    webhookUrl,
    receiver,
    async webhooks(on) {
      const res = await fetch(`${sandbox.accountingUrl}/__sandbox/webhook-endpoints/app_demo`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: on ? webhookUrl : null }),
      });
      if (!res.ok) throw new Error(`setting the webhook endpoint: HTTP ${res.status}`);
    },
    async close() {
      await pair.close();
      await receiver.close();
      await sandbox.close();
    },
  };
}
