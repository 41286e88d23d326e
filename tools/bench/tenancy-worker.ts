/**
 * The tenancy section's worker: ONE worker process (WorkerProcess.start, what `npm run worker` runs with
 * TENANTS_FILE) in the bench process, on a task queue of its own, serving every application of a tenants file and
 * reading the file again every `reloadMs`, so an application added to it is served without a restart.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { SalesClient } from '../../src/client/sales-client.js';
import { loadTenantsConfig } from '../../src/tenants/load.js';
import { loadTenantsWorkerConfig } from '../../src/config/worker.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { benchWorkerSettings, type BenchTemporal } from './env.js';

export interface TenancyWorker {
  taskQueue: string;
  sales: SalesClient;
  /** What the worker resolved at start: the applications it serves and their businesses. */
  served: { applications: number; businesses: number };
  /** Task queues the process polls now, and those its deployment version does not hold (asked of the server now). */
  queues(): Promise<{ polled: number; refused: string[] }>;
  stop(): Promise<void>;
}

export async function startTenancyWorker(
  t: BenchTemporal,
  options: { tenantsFile: string; reloadMs: number },
): Promise<TenancyWorker> {
  const taskQueue = `bench-tenancy-${randomUUID().slice(0, 8)}`;
  // Read as the worker reads it (src/tenants/load.ts): the file alone, no single-key variable beside it.
  const load = () => loadTenantsConfig({ TENANTS_FILE: options.tenantsFile });
  // As `npm run worker` with TENANTS_FILE configures itself (its headroom included).
  const worker = loadTenantsWorkerConfig(process.env);
  const settings = {
    ...benchWorkerSettings(worker),
    tenantsReload: { load, intervalMs: options.reloadMs },
  };
  const sale = await WorkerProcess.start(settings, {
    brought: { connection: t.native, client: t.client, tenants: load() },
    logger: pino({ level: 'silent' }),
    taskQueue,
    workflowBundle: t.saleBundle,
  });
  const running = sale.run();
  await sale.routing;
  const applications = sale.tenants?.current().applications() ?? [];
  return {
    taskQueue,
    sales: new SalesClient(t.client, { taskQueue }),
    served: {
      applications: applications.length,
      businesses: applications.reduce((sum, a) => sum + a.businesses.length, 0),
    },
    queues: async () => {
      await sale.queues.check();
      return {
        polled: new Set(sale.workers.every().map((w) => w.options.taskQueue)).size,
        refused: sale.queues.missing().map((q) => q.taskQueue),
      };
    },
    stop: async () => {
      sale.shutdown();
      await running.catch(() => undefined);
      await sale.close();
    },
  };
}
