/**
 * A worker process that starts while a service is down (the sandbox's fault injection answering 503, or nothing
 * listening): it starts, says so once per key, serves the tenant once the service answers, and until then its
 * businesses wait (retryable) rather than being refused. A refused key or an insecure URL still stops the start.
 */
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTING_API_KEY, DEMO_RECONCILIATION_LINK } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { ConfigError } from '../../src/config/env.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { reconciliationScheduleId } from '../../src/contracts/reconciliation.js';
import { AWAITED_SERVICE_FAILURE, openTenantAccess } from '../../src/tenants/access.js';
import { TenantConfigError, TenantServiceError } from '../../src/tenants/directory.js';
import { singleKeyTenants } from '../../src/tenants/single-key.js';
import type { ComplianceTenant, TenantsConfig } from '../../src/tenants/types.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';
import { sandboxTenants } from '../helpers/tenants.js';
import { testWorkerSettings } from '../helpers/worker-settings.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url));
const B = DEMO.businesses;
const K = DEMO.keys;
const WRONG_KEY = 'cmp_sk_test_wrong_key_never_print_0001';
const OUTAGE_WARNING = /service is unavailable: starting without this key/;

interface Entry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

let sandbox: Sandbox;
let workflowBundle: WorkflowBundleWithSourceMap;
const { accounting, link, tenants } = sandboxTenants(() => sandbox);

beforeAll(async () => {
  sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
  workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: testLogger });
});

afterAll(async () => {
  await sandbox?.close();
  await closeTestEnv();
});

function compliance(application: string, apiKey: string, options: { businesses?: string[]; baseUrl?: string } = {}) {
  return {
    application,
    service: {
      baseUrl: options.baseUrl ?? sandbox.complianceUrl,
      apiKey,
      businessId: undefined,
      timeoutMs: 5_000,
      allowLoopbackCallbacks: true,
    },
    requestsPerMinute: 600,
    businesses: options.businesses,
    source: `tenants.json: compliance (${application})`,
  } satisfies ComplianceTenant;
}

/** A logger whose JSON lines the test reads, and every line as written (to look for keys in). */
function capturingLogger() {
  const entries: Entry[] = [];
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          lines.push(line);
          entries.push(JSON.parse(line) as Entry);
        }
        done();
      },
    }),
  );
  return { logger, entries, lines };
}

async function start(config: TenantsConfig, logger = pino({ level: 'silent' })) {
  const env = await getTestEnv();
  const taskQueue = uniqueTaskQueue('outage-start');
  const worker = await WorkerProcess.start(testWorkerSettings(), {
    brought: { connection: env.nativeConnection, client: env.client, tenants: config },
    logger,
    taskQueue,
    workflowBundle,
    outageRetry: { firstDelayMs: 200, maxDelayMs: 1_000 },
  });
  return { worker, taskQueue, running: worker.run() };
}

async function stop({ worker, running }: { worker: WorkerProcess; running: Promise<void> }) {
  worker.shutdown();
  await running;
  await worker.close();
}

function placementFailure(worker: WorkerProcess, businessId: string): ApplicationFailure {
  // The placement local activity's own call; the access is not closed here (it would close the worker's tenants).
  try {
    openTenantAccess(worker.tenants).place(businessId, { newWork: true });
  } catch (err) {
    if (err instanceof ApplicationFailure) return err;
    throw err;
  }
  throw new Error(`business ${businessId} was placed`);
}

describe('a worker starting while a service is down', () => {
  it('starts on a 503, logs it once per key, makes its businesses wait, and serves them once it answers', async () => {
    const { logger, entries, lines } = capturingLogger();
    const fault = await sandbox.inspector.addFault({
      service: 'compliance',
      path: '/v1/identity',
      kind: 'error',
      status: 503,
    });
    const config = tenants({
      compliance: [compliance('retail', K.nairobi, { businesses: [B.nairobi] })],
      accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY)],
      links: [link(B.nairobi, DEMO_RECONCILIATION_LINK.companyId, 'books')],
    });
    let faulted = true;
    const process = await start(config, logger);
    const { worker, taskQueue } = process;
    try {
      const warnings = () => entries.filter((e) => OUTAGE_WARNING.test(e.msg));
      expect(warnings()).toEqual([
        expect.objectContaining({
          level: 40,
          service: 'compliance',
          application: 'retail',
          cause: `tenants.json: compliance (retail): the compliance service at ${sandbox.complianceUrl} failed getIdentity (503 service_unavailable)`,
        }),
      ]);
      expect(entries.find((e) => e.msg === 'workers ready')).toMatchObject({
        tenants: { awaited: ['compliance retail'], links: 0 },
      });
      // Not known yet: placement is retried, not refused; a business no entry lists is still refused.
      expect(worker.tenants.awaits(B.nairobi)).toBe(true);
      expect(worker.tenants.routeOf(B.nairobi)).toBeUndefined();
      const waiting = placementFailure(worker, B.nairobi);
      expect(waiting.type).toBe(AWAITED_SERVICE_FAILURE);
      expect(waiting.nonRetryable).toBe(false);
      expect(placementFailure(worker, B.mombasa)).toMatchObject({
        type: FAILURE_TYPES.businessNotServed,
        nonRetryable: true,
      });

      // Asked again in the background, warned about once.
      await eventually(
        async () => (await sandbox.inspector.requestLog({ service: 'compliance' })).filter((r) => r.status === 503),
        (answered) => answered.length >= 3,
        { timeoutMs: 10_000, what: 'the key asked again' },
      );
      expect(warnings()).toHaveLength(1);

      await sandbox.inspector.removeFault(fault.id!);
      faulted = false;
      const route = await eventually(
        () => worker.tenants.routeOf(B.nairobi),
        (found) => found !== undefined,
        { timeoutMs: 10_000, what: 'the tenant served' },
      );
      expect(route?.application.application).toBe('retail');
      expect(worker.tenants.awaits(B.nairobi)).toBe(false);
      expect(worker.tenants.current().links()).toEqual([expect.objectContaining({ businessId: B.nairobi })]);
      expect(openTenantAccess(worker.tenants).place(B.nairobi, { newWork: true })).toMatchObject({
        application: 'retail',
      });
      expect(entries.filter((e) => e.msg === 'compliance keys accepted').at(-1)).toMatchObject({
        keys: [expect.objectContaining({ application: 'retail' })],
      });
      // Acted on as a reload is: the link's reconciliation schedule made.
      await eventually(() => entries.some((e) => e.msg === 'reconciliation schedules ready'), Boolean, {
        timeoutMs: 10_000,
        what: 'the reconciliation schedule',
      });
      for (const line of lines) expect(line).not.toContain(K.nairobi);
    } finally {
      if (faulted) await sandbox.inspector.removeFault(fault.id!);
      await stop(process);
      const { client } = await getTestEnv();
      await client.schedule
        .getHandle(reconciliationScheduleId(B.nairobi, `reconciliation:${taskQueue}`))
        .delete()
        .catch(() => undefined);
    }
  });

  it('makes a company wait while its accounting service is down', async () => {
    const fault = await sandbox.inspector.addFault({ service: 'accounting', kind: 'error', status: 502 });
    let faulted = true;
    const process = await start(
      tenants({
        compliance: [compliance('retail', K.orgWide)],
        accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY)],
      }),
    );
    try {
      expect(process.worker.tenants.awaitsAccounting()).toBe(true);
      expect(process.worker.tenants.routeOf(B.nairobi)?.application.application).toBe('retail');
      const access = openTenantAccess(process.worker.tenants);
      expect(() => access.accounting(DEMO_RECONCILIATION_LINK.companyId)).toThrow(
        expect.objectContaining({ type: AWAITED_SERVICE_FAILURE, nonRetryable: false }),
      );
      await sandbox.inspector.removeFault(fault.id!);
      faulted = false;
      await eventually(
        () => process.worker.tenants.awaitsAccounting(),
        (awaits) => !awaits,
        { timeoutMs: 10_000, what: 'the accounting key served' },
      );
      expect(access.accounting(DEMO_RECONCILIATION_LINK.companyId)).toBeDefined();
    } finally {
      if (faulted) await sandbox.inspector.removeFault(fault.id!);
      await stop(process);
    }
  });

  it('starts when nothing listens at the URL, naming the variable (an outage for a running fleet)', async () => {
    const { logger, entries } = capturingLogger();
    const unreachable = 'http://127.0.0.1:9';
    const config = singleKeyTenants(
      {
        compliance: { ...compliance('default', K.nairobi, { baseUrl: unreachable }).service },
        accounting: accounting('default', DEMO_ACCOUNTING_API_KEY).service,
      },
      { requestsPerMinute: 120 },
    );
    const process = await start(config, logger);
    try {
      const warning = entries.find((e) => OUTAGE_WARNING.test(e.msg));
      expect(warning?.cause).toContain(
        `COMPLIANCE_BASE_URL: the compliance service at ${unreachable} cannot be reached`,
      );
      // A single key that lists no business: whatever business a call names waits for it.
      expect(process.worker.tenants.awaits('biz_any')).toBe(true);
    } finally {
      await stop(process);
    }
  });
});

describe('a worker starting with a key or URL that is wrong stops as before', () => {
  it('a refused key stops the start, named by its entry or variable, never printed', async () => {
    const file = start(tenants({ compliance: [compliance('retail', WRONG_KEY)] }));
    await expect(file).rejects.toThrow(TenantConfigError);
    await expect(file).rejects.toThrow(
      `tenants.json: compliance (retail): the compliance service at ${sandbox.complianceUrl} refused the key (401 invalid_api_key)`,
    );
    const variables = start(
      singleKeyTenants(
        {
          compliance: compliance('default', WRONG_KEY).service,
          accounting: accounting('default', DEMO_ACCOUNTING_API_KEY).service,
        },
        { requestsPerMinute: 120 },
      ),
    );
    await expect(variables).rejects.toThrow(TenantServiceError);
    await expect(variables).rejects.toThrow(
      `COMPLIANCE_API_KEY was refused by the compliance service at ${sandbox.complianceUrl} (401 invalid_api_key)`,
    );
    await expect(variables).rejects.not.toThrow(WRONG_KEY);
  });

  it('a refused key stops the start even while another key waits on an outage', async () => {
    const fault = await sandbox.inspector.addFault({ service: 'accounting', kind: 'error', status: 503 });
    try {
      const started = start(
        tenants({
          compliance: [compliance('retail', WRONG_KEY)],
          accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY)],
        }),
      );
      await expect(started).rejects.toThrow('refused the key (401 invalid_api_key)');
    } finally {
      await sandbox.inspector.removeFault(fault.id!);
    }
  });

  it('a URL that is not https (nor loopback) is a configuration error, not an outage', async () => {
    const started = start(
      tenants({ compliance: [compliance('retail', K.nairobi, { baseUrl: 'http://compliance.example.com' })] }),
    );
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow('plain http to compliance.example.com');
  });
});
