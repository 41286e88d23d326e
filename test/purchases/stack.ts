/**
 * A real purchases-sync stack for one test file (or the bench script), assembled by the code the worker process runs
 * (test/helpers/worker-stack.ts: the embedded sandbox over HTTP, the real worker process with its purchases schedule
 * made at start-up, on its own task queues of a Temporal server), with the sink the test chooses. No vitest here, so
 * tools/bench/purchases-main.ts can use it.
 */
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import { syncPurchasesNow } from '../../src/client/purchases.js';
import type { PurchasesConfig } from '../../src/config/purchases.js';
import type { StockInSettings } from '../../src/contracts/stock-in.js';
import type { PurchaseEventSink } from '../../src/purchases/event-sink.js';
import type { WorkerProcess } from '../../src/worker/process.js';
import type { ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { InspectedPurchase } from '../../sandbox/compliance/purchase-inspection.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { Sandbox } from '../../sandbox/server.js';
import {
  purchasesScheduleId,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../../src/contracts/purchases-sync.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { startWorkerStack, type TemporalAccess } from '../helpers/worker-stack.js';

export { DEMO };
export type { TemporalAccess };

export interface PurchasesStackOptions {
  /** Default: the demo world at the workflow tests' pace. */
  fixture?: ComplianceFixtureInput;
  /** Businesses with a schedule (default: Nairobi). */
  businessIds?: string[];
  /** A fresh sink for each worker process (a restart opens it again). */
  sink: () => Promise<PurchaseEventSink>;
  syncOptions?: PurchasesSyncOptions;
  /** The compliance queue's server-side rate limit (default 50 per second). */
  activitiesPerSecond?: number;
  /** Sync interval (default 1 hour: tests run syncs on demand). */
  intervalMs?: number;
  /** Businesses taking stock in, with their settings (default: none). */
  stockIn?: Record<string, StockInSettings>;
}

export interface PurchasesStack {
  sandbox: Sandbox;
  client: Client;
  taskQueue: string;
  service: WorkerProcess;
  scheduleId(businessId?: string): string;
  /** The sync the schedule ran at start-up, once it has ended. */
  firstSync(businessId?: string): Promise<PurchasesSyncResult & { workflowId: string }>;
  /** A sync on demand, through the schedule, to its end. */
  sync(businessId?: string): Promise<PurchasesSyncResult & { workflowId: string }>;
  /** Stops the worker process (as a crash or a deploy would) and starts another on the same queues. */
  replaceWorker(): Promise<void>;
  /** The sandbox's view of supplier invoices, held ones included. */
  purchases(businessId?: string): Promise<InspectedPurchase[]>;
  /** The tax authority receives an invoice: the next pull fetches it. */
  addPurchase(purchase: Record<string, unknown>, businessId?: string): Promise<InspectedPurchase>;
  /** A review on the dashboard. */
  review(purchaseId: string, status: string, confirmationError?: string | null): Promise<InspectedPurchase>;
  close(): Promise<void>;
}

async function inspection<T>(sandbox: Sandbox, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(new URL(`/__sandbox${path}`, sandbox.complianceUrl), {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A world where the Nairobi business has `count` supplier invoices (instead of the demo's), over 200 days, so a
 * test or the bench sees many pages.
 */
export function manyPurchases(count: number): ComplianceFixtureInput {
  return fastFixture((fixture) => {
    const nairobi = fixture.businesses!.find((b) => b.id === DEMO.businesses.nairobi)!;
    nairobi.purchases = Array.from({ length: count }, (_, n) => ({
      ...(supplierInvoice(
        `pur_many_${String(n + 1).padStart(5, '0')}`,
        new Date(Date.UTC(2025, 5, 30) - (n % 200) * 86_400_000).toISOString().slice(0, 10),
      ) as object),
      supplierInvoiceNumber: `MANY-${n + 1}`,
      status: 'pending_review',
    })) as never;
  });
}

/**
 * The demo world without its timeline (the late invoice of the second pull, the reviews between pulls): each sync
 * test moves the world itself (addPurchase, review), so what a sync delivers is exactly what the test did.
 */
export function staticPurchases(): ComplianceFixtureInput {
  return fastFixture((fixture) => {
    for (const business of fixture.businesses ?? []) {
      business.purchases = (business.purchases ?? [])
        .filter((p) => p.arrivesAtPull === undefined)
        .map((p) => ({ ...p, reviews: [] }));
    }
  });
}

/** A supplier invoice for `addPurchase`, dated `invoiceDate`, on the Nairobi CBD branch. */
export function supplierInvoice(
  id: string,
  invoiceDate: string,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    supplier: { name: 'Late Supplier Ltd', pin: 'P051199999Z' },
    supplierInvoiceNumber: `LATE-${id}`,
    invoiceDate,
    branchId: DEMO.branches.nairobiCbd,
    lines: [{ description: 'Maize flour 2kg bale', quantity: 3, unitPrice: 1_800, taxRate: 0 }],
    ...more,
  };
}

export async function startPurchasesStack(
  temporal: TemporalAccess,
  bundle: WorkflowBundle,
  options: PurchasesStackOptions,
): Promise<PurchasesStack> {
  const businessIds = options.businessIds ?? [DEMO.businesses.nairobi];
  // The sink named here only switches the sync on; each process delivers to the test's sink.
  const config: PurchasesConfig = {
    sink: { kind: 'file', path: '/dev/null' },
    intervalMs: options.intervalMs ?? 3_600_000,
    businessIds,
    listing: {},
  };
  const stack = await startWorkerStack(temporal, bundle, {
    fixture: options.fixture ?? staticPurchases(),
    taskQueuePrefix: 'purchases',
    // Polling only: these workers file no sales needing callbacks, and the priority test's sales poll.
    callbacks: false,
    ...(options.activitiesPerSecond === undefined ? {} : { activitiesPerSecond: options.activitiesPerSecond }),
    purchases: config,
    ...(options.stockIn ? { stockIn: (businessId: string) => options.stockIn![businessId] } : {}),
    perProcess: async () => ({
      purchasesSink: await options.sink(),
      ...(options.syncOptions ? { purchasesSyncOptions: options.syncOptions } : {}),
    }),
  });
  const { sandbox, client, taskQueue } = stack;

  const scheduleId = (businessId = businessIds[0]!) => purchasesScheduleId(businessId, taskQueue);
  return {
    sandbox,
    client,
    taskQueue,
    get service() {
      return stack.worker;
    },
    scheduleId,
    async firstSync(businessId = businessIds[0]!) {
      const handle = client.schedule.getHandle(scheduleId(businessId));
      const description = await eventually(
        () => handle.describe(),
        (d) => d.info.recentActions.length + d.info.runningActions.length > 0,
        { what: 'the first scheduled sync' },
      );
      const first = description.info.recentActions[0]?.action.workflow ?? description.info.runningActions[0]!.workflow;
      const result = (await client.workflow
        .getHandle(first.workflowId, first.firstExecutionRunId)
        .result()) as PurchasesSyncResult;
      return { ...result, workflowId: first.workflowId };
    },
    async sync(businessId = businessIds[0]!) {
      const { workflowId, result } = await syncPurchasesNow(client, businessId, {
        taskQueue,
        wait: true,
        timeoutMs: 120_000,
      });
      return { ...result!, workflowId: workflowId! };
    },
    replaceWorker: () => stack.replaceWorker(),
    async purchases(businessId = businessIds[0]!) {
      return (
        await inspection<{ purchases: InspectedPurchase[] }>(
          sandbox,
          'GET',
          `/purchases?businessId=${encodeURIComponent(businessId)}`,
        )
      ).purchases;
    },
    addPurchase: (purchase, businessId = businessIds[0]!) =>
      inspection(sandbox, 'POST', '/purchases', { businessId, purchase }),
    review: (purchaseId, status, confirmationError = null) =>
      inspection(sandbox, 'POST', `/purchases/${encodeURIComponent(purchaseId)}/review`, { status, confirmationError }),
    async close() {
      for (const businessId of businessIds)
        await client.schedule
          .getHandle(scheduleId(businessId))
          .delete()
          .catch(() => undefined);
      await stack.close();
    },
  };
}
