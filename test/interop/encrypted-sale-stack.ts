/**
 * A sale stack whose worker process encrypts, as a deployment with PAYLOAD_KEYS does: the embedded sandbox over
 * HTTP, the real worker process on a fresh task queue of the run's dev server, its data converter read from a
 * PAYLOAD_KEYS value by the production code (payloadEncryptionFromEnv), the workflow bundle built with the
 * encrypting failure converter, and the codec server on the same keys. (test/helpers/worker-stack.ts builds the
 * same stack without encryption.)
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { pino } from 'pino';
import type { Sandbox } from '../../sandbox/server.js';
import { failureConverterPath, payloadEncryptionFromEnv } from '../../src/codec/data-converter.js';
import { startCodecServer, type CodecServer } from '../../src/codec/server.js';
import { resolveServices } from '../../src/services/endpoints.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { getTestEnv, testLogger } from '../helpers/temporal.js';
import { singleKeyTestTenants, testWorkerSettings } from '../helpers/worker-settings.js';

export interface EncryptedSaleStack {
  address: string;
  namespace: string;
  taskQueue: string;
  sandbox: Sandbox;
  /** A client with the workers' keys. */
  client: Client;
  /** A client without any codec: what someone reading the Temporal database sees. */
  rawClient: Client;
  codecServer: CodecServer;
  codecToken: string;
  close(): Promise<void>;
}

export async function startEncryptedSaleStack(options: {
  address: string;
  payloadKeys: string;
}): Promise<EncryptedSaleStack> {
  const env = await getTestEnv();
  const namespace = env.namespace ?? 'default';
  const encryption = payloadEncryptionFromEnv({ PAYLOAD_KEYS: options.payloadKeys });
  if (!encryption.encrypted) throw new Error('the stack must encrypt');
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const embedded = await resolveServices(
    { compliance: undefined, accounting: undefined, logLevel: logger.level },
    logger,
    {
      sandboxFixture: { compliance: fastFixture() },
    },
  );
  // No loopback callbacks: the workflow polls, as against the real service.
  const services = { ...embedded, compliance: { ...embedded.compliance, allowLoopbackCallbacks: false } };
  const client = new Client({ connection: env.connection, namespace, dataConverter: encryption.dataConverter });
  const taskQueue = `python-caller-${randomUUID()}`;
  const workflowBundle = await bundleWorkflowCode({
    ...workflowSources(),
    failureConverterPath: failureConverterPath(),
    logger: testLogger,
  });
  const settings = testWorkerSettings({ worker: { complianceRequestsPerMinute: 50 * 60, complianceRateHeadroom: 0 } });
  const worker = await WorkerProcess.start(settings, {
    brought: { connection: env.nativeConnection, client, tenants: singleKeyTestTenants(services, settings) },
    logger,
    taskQueue,
    workflowBundle,
  });
  const running = worker.run();
  const codecToken = `python-caller-${randomUUID()}`;
  const codecServer = await startCodecServer({ codec: encryption.codec, logger, authToken: codecToken });
  return {
    address: options.address,
    namespace,
    taskQueue,
    sandbox: embedded.sandbox as Sandbox,
    client,
    rawClient: new Client({ connection: env.connection, namespace }),
    codecServer,
    codecToken,
    async close() {
      await codecServer.close();
      worker.shutdown();
      await running;
      await worker.close();
      await services.close();
    },
  };
}
