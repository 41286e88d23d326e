/**
 * A real sale stack, assembled by the code the worker process runs (test/helpers/worker-stack.ts: the embedded
 * sandbox over HTTP, the real workers on their own task queues of a Temporal server, and optionally the real
 * callback receiver). No vitest here, so tools/record-histories.ts can run the same stack against a dev server it
 * starts itself; tests use it through harness.ts.
 */
import type { StockReportingOf } from '../../src/config/stock-reporting.js';
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import type { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import type { CallbackServer } from '../../src/callbacks/server.js';
import type { WorkerProcess } from '../../src/worker/process.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { ComplianceFixtureInput, ItemFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { Sandbox } from '../../sandbox/server.js';
import { getSaleStateQuery, saleWorkflowId, type SaleInput, type SaleState } from '../../src/contracts/sale.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { startWorkerStack, type TemporalAccess, type WorkerStackOptions } from '../helpers/worker-stack.js';

export { DEMO, fastFixture, invoiceNumber };
export type { TemporalAccess };

export interface SaleStackOptions {
  /** The embedded sandbox's compliance world (default: the demo world at the workflow tests' pace). */
  fixture?: ComplianceFixtureInput;
  /** Start the real callback receiver and mint callback URLs (default false: polling alone). */
  callbacks?: boolean;
  /** The compliance queue's server-side rate limit (default 50 per second). */
  activitiesPerSecond?: number;
  /** How each business's stock is reported (default: DEFAULT_STOCK_REPORTING). */
  stockReporting?: StockReportingOf;
  /** What each worker process opens of its own (an event sink). */
  perProcess?: WorkerStackOptions['perProcess'];
}

/** The sale workflow's signature, so handles give typed results. */
export type SaleWorkflowType = (input: SaleInput) => Promise<SaleState>;
export type SaleHandle = WorkflowHandle<SaleWorkflowType>;

export interface SaleStack {
  sandbox: Sandbox;
  client: Client;
  taskQueue: string;
  workers: WorkerProcess['workers'];
  callbacks: CallbackServer | undefined;
  /** Mints callback URLs exactly as the workers do (undefined without callbacks). */
  minter: CallbackUrlMinter | undefined;
  start(input: SaleInput): Promise<SaleHandle>;
  state(handle: WorkflowHandle): Promise<SaleState>;
  /** Polls the query until `predicate` holds (or fails after `timeoutMs`). */
  waitFor(handle: WorkflowHandle, predicate: (s: SaleState) => boolean, timeoutMs?: number): Promise<SaleState>;
  /**
   * Stops the worker process (as a crash or a deploy would) and starts a new one on the same queues, with a
   * callback receiver of its own: URLs minted before stop verifying, and polling covers those sales.
   */
  replaceWorkers(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Adds to the Nairobi business a copy of one of its items under a fresh id, so a test gets an item in a known
 * registration state that no other test (or earlier run on the same Temporal server) has touched.
 */
export function addItemCopy(fixture: ComplianceFixtureInput, sourceItemId: string, label: string): string {
  const business = fixture.businesses?.find((b) => b.id === DEMO.businesses.nairobi);
  const source = business?.items?.find((i) => i.id === sourceItemId);
  if (!business || !source) throw new Error(`the fixture has no Nairobi item ${sourceItemId}`);
  const suffix = randomUUID().slice(0, 8);
  const copy: ItemFixtureInput = {
    ...source,
    id: `${sourceItemId}_${label}_${suffix}`,
    externalId: `${source.externalId}-${label}-${suffix}`,
  };
  business.items = [...(business.items ?? []), copy];
  return copy.id;
}

export async function startSaleStack(
  temporal: TemporalAccess,
  bundle: WorkflowBundle,
  options: SaleStackOptions = {},
): Promise<SaleStack> {
  const stack = await startWorkerStack(temporal, bundle, {
    fixture: options.fixture ?? fastFixture(),
    taskQueuePrefix: 'sale',
    callbacks: options.callbacks ?? false,
    ...(options.activitiesPerSecond === undefined ? {} : { activitiesPerSecond: options.activitiesPerSecond }),
    ...(options.stockReporting ? { stockReporting: options.stockReporting } : {}),
    ...(options.perProcess ? { perProcess: options.perProcess } : {}),
  });
  const { sandbox, client, taskQueue } = stack;
  const state = (handle: WorkflowHandle) => handle.query(getSaleStateQuery);
  return {
    sandbox,
    client,
    taskQueue,
    get workers() {
      return stack.worker.workers;
    },
    get callbacks() {
      return stack.worker.callbacks;
    },
    get minter() {
      return stack.worker.callbackUrls;
    },
    start: (input) =>
      client.workflow.start<SaleWorkflowType>('saleWorkflow', {
        taskQueue,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      }),
    state,
    waitFor: (handle, predicate, timeoutMs = 20_000) =>
      eventually(() => state(handle), predicate, { timeoutMs, what: 'sale state' }),
    replaceWorkers: () => stack.replaceWorker(),
    close: () => stack.close(),
  };
}

export function saleInput(overrides: Partial<SaleInput> = {}): SaleInput {
  return {
    businessId: DEMO.businesses.nairobi,
    traderInvoiceNumber: invoiceNumber(),
    saleDate: '2026-11-21',
    lines: [
      { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
      { itemId: DEMO.items.milk, quantity: 1, unitPrice: 65 },
    ],
    options: { refundWindowDays: 0 },
    ...overrides,
  };
}

/** A refund window of `seconds`, as the workflow's `refundWindowDays` option. */
export function windowOfSeconds(seconds: number): number {
  return seconds / 86_400;
}
