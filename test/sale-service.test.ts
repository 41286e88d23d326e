import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComplianceConfig } from '../src/config/env.js';
import { loadWorkerConfig } from '../src/config/worker.js';
import { startSaleService, type SaleService } from '../src/sale-service.js';
import { resolveServices, type ServiceEndpoints } from '../src/services.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from './helpers/temporal.js';

// Any workflows will do: these tests start and stop the service; the workflow tests run sales on it.
const workflowsPath = fileURLToPath(new URL('./fixtures/workflows/echo.ts', import.meta.url));
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

async function startService(compliance: Partial<ComplianceConfig> = {}): Promise<SaleService> {
  const env = await getTestEnv();
  const namespace = env.namespace ?? 'default';
  return startSaleService({
    connection: env.nativeConnection,
    client: env.client,
    namespace,
    services: { ...services, compliance: { ...services.compliance, ...compliance } },
    config: { ...loadWorkerConfig({}), namespace },
    logger,
    taskQueue: uniqueTaskQueue('sale-service'),
    workflowBundle,
  });
}

async function stop(sale: SaleService, running: Promise<void>): Promise<void> {
  sale.shutdown();
  await running;
  await sale.close();
}

describe('startSaleService', () => {
  it('receives callbacks on a local stack, minting URLs that lead to its own receiver', async () => {
    const sale = await startService();
    const running = sale.run();
    try {
      expect(sale.callbacks?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sale.callbackUrls?.mint('sale:biz_1:INV-1')).toMatch(new RegExp(`^${sale.callbacks?.url}/callbacks/sale%3Abiz_1%3AINV-1/([0-9a-z]{1,11}\\.)?[\\w-]{43}$`));
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
});
