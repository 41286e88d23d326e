import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComplianceConfig } from '../../src/config/env.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { ConfigError } from '../../src/config/env.js';
import type { ReconciliationConfig } from '../../src/config/reconciliation.js';
import type { PurchaseEventSink } from '../../src/purchases/event-sink.js';
import { resolveServices, type ServiceEndpoints } from '../../src/services/endpoints.js';
import { DEMO_RECONCILIATION_LINK, OTHER_COMPANY_ID } from '../../sandbox/accounting/default-fixture.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';
import { singleKeyTestTenants, testWorkerSettings } from '../helpers/worker-settings.js';

// Any workflows will do: these tests start and stop the service; the workflow tests run sales on it.
const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url));
const logger = pino({ level: 'silent' });

let services: ServiceEndpoints;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  // Neither service configured: the embedded sandbox, as on a local stack.
  services = await resolveServices({ compliance: undefined, accounting: undefined, logLevel: 'silent' }, logger);
  workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: testLogger });
});

afterAll(async () => {
  await services?.close();
  await closeTestEnv();
});

async function startService(
  compliance: Partial<ComplianceConfig> = {},
  reconciliation: ReconciliationConfig = { links: [], every: '24h' },
  process: { purchasesSink?: PurchaseEventSink; logger?: Logger } = {},
): Promise<WorkerProcess> {
  const env = await getTestEnv();
  const settings = testWorkerSettings({ reconciliation });
  return WorkerProcess.start(settings, {
    brought: {
      connection: env.nativeConnection,
      client: env.client,
      tenants: singleKeyTestTenants({ ...services, compliance: { ...services.compliance, ...compliance } }, settings),
    },
    logger,
    taskQueue: uniqueTaskQueue('sale-service'),
    workflowBundle,
    ...process,
  });
}

async function stop(sale: WorkerProcess, running: Promise<void>): Promise<void> {
  sale.shutdown();
  await running;
  await sale.close();
}

describe('WorkerProcess.start', () => {
  it('receives callbacks on a local stack, minting URLs that lead to its own receiver', async () => {
    const sale = await startService();
    const running = sale.run();
    try {
      expect(sale.callbacks?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sale.callbackUrls?.mint('sale:biz_1:INV-1')).toMatch(
        new RegExp(`^${sale.callbacks?.url}/callbacks/sale%3Abiz_1%3AINV-1/([0-9a-z]{1,11}\\.)?[\\w-]{43}$`),
      );
    } finally {
      await stop(sale, running);
    }
  });

  it('polls only when the compliance service cannot call back to loopback', async () => {
    const sale = await startService({ allowLoopbackCallbacks: false });
    const running = sale.run();
    try {
      expect(sale.callbacks).toBeUndefined();
      expect(sale.callbackUrls).toBeUndefined();
    } finally {
      await stop(sale, running);
    }
  });

  it('makes one reconciliation schedule per linked business, and refuses a link to a company the key cannot see', async () => {
    const sale = await startService({}, { links: [{ ...DEMO_RECONCILIATION_LINK }], every: '24h' });
    const running = sale.run();
    try {
      expect(sale.reconciliation).toEqual([
        expect.objectContaining({ businessId: DEMO_RECONCILIATION_LINK.businessId, outcome: 'created' }),
      ]);
      const { client } = await getTestEnv();
      const description = await client.schedule.getHandle(sale.reconciliation[0]!.scheduleId).describe();
      expect(description.action).toMatchObject({ workflowType: 'reconciliationWorkflow' });
      await client.schedule.getHandle(sale.reconciliation[0]!.scheduleId).delete();
    } finally {
      await stop(sale, running);
    }

    const refused = startService(
      {},
      { links: [{ businessId: DEMO_RECONCILIATION_LINK.businessId, companyId: OTHER_COMPANY_ID }], every: '24h' },
    );
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(
      `RECONCILE_LINKS: accounting company ${OTHER_COMPANY_ID} is not visible to the accounting API key`,
    );
    const unknownBusiness = startService(
      {},
      { links: [{ businessId: 'biz_nobody', companyId: DEMO_RECONCILIATION_LINK.companyId }], every: '24h' },
    );
    await expect(unknownBusiness).rejects.toThrow(
      /^RECONCILE_LINKS: business biz_nobody is not one the compliance API key may act for/,
    );
  });

  it('closes everything it opened, newest first, even when one of them fails to close', async () => {
    const closed: string[] = [];
    const sink: PurchaseEventSink = {
      description: 'a sink whose close fails',
      deliver: async () => {},
      close: async () => {
        closed.push('sink');
        throw new Error('the sink could not flush');
      },
    };
    const lines: string[] = [];
    const sale = await startService({}, undefined, {
      purchasesSink: sink,
      logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) }),
    });
    const running = sale.run();
    const receiver = sale.callbacks!.url;
    expect((await fetch(`${receiver}/health`)).status).toBe(200);
    // Closed before the stop, which would close the receiver too: here only the stack closes it.
    await expect(sale.close()).resolves.toBeUndefined();
    expect(closed).toEqual(['sink']);
    // Opened before the sink, so closed after its failure: the receiver's port no longer answers.
    await expect(fetch(`${receiver}/health`)).rejects.toThrow();
    sale.shutdown();
    await running;
    const failed = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'close failed');
    expect(failed).toEqual([expect.objectContaining({ errs: ['the sink could not flush'] })]);
  });
});
