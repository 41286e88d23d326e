/**
 * A real sale stack, assembled by the code the worker process runs: resolveServices (its embedded sandbox, over
 * HTTP) and startSaleService (the real workers on their own task queues of a Temporal server, and optionally
 * the real callback receiver). No vitest here, so tools/record-histories.ts can run the same stack against
 * a dev server it starts itself; tests use it through harness.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { NativeConnection, WorkflowBundle } from '@temporalio/worker';
import { pino } from 'pino';
import type { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import type { CallbackServer } from '../../src/callbacks/server.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { startSaleService } from '../../src/worker/start.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { ComplianceFixtureInput, ItemFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { Sandbox } from '../../sandbox/server.js';
import { resolveServices } from '../../src/services/endpoints.js';
import type { SaleWorkers } from '../../src/worker/workers.js';
import { getSaleStateQuery, saleWorkflowId, type SaleInput, type SaleState } from '../../src/contracts/sale.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { invoiceNumber } from '../helpers/invoice-number.js';

export { DEMO, fastFixture, invoiceNumber };

/** Where the stack's workers and clients reach Temporal. */
export interface TemporalAccess {
  client: Client;
  nativeConnection: NativeConnection;
  namespace: string;
}

export interface SaleStackOptions {
  /** The embedded sandbox's compliance world (default: the demo world at the workflow tests' pace). */
  fixture?: ComplianceFixtureInput;
  /** Start the real callback receiver and mint callback URLs (default false: polling alone). */
  callbacks?: boolean;
  /** The compliance queue's server-side rate limit (default 50 per second). */
  activitiesPerSecond?: number;
}

/** The sale workflow's signature, so handles give typed results. */
export type SaleWorkflowType = (input: SaleInput) => Promise<SaleState>;
export type SaleHandle = WorkflowHandle<SaleWorkflowType>;

export interface SaleStack {
  sandbox: Sandbox;
  client: Client;
  taskQueue: string;
  workers: SaleWorkers;
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
  const copy: ItemFixtureInput = { ...source, id: `${sourceItemId}_${label}_${suffix}`, externalId: `${source.externalId}-${label}-${suffix}` };
  business.items = [...(business.items ?? []), copy];
  return copy.id;
}

export async function startSaleStack(temporal: TemporalAccess, bundle: WorkflowBundle, options: SaleStackOptions = {}): Promise<SaleStack> {
  const { client } = temporal;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // Neither service configured: the embedded sandbox stands in for both, as on a local stack.
  const embedded = await resolveServices({ compliance: undefined, accounting: undefined, logLevel: logger.level }, logger, {
    sandboxFixture: { compliance: options.fixture ?? fastFixture() },
  });
  const sandbox = embedded.sandbox as Sandbox;
  // Without loopback callbacks the service gets no receiver and the workflows poll, as against the real service.
  const services = options.callbacks ? embedded : { ...embedded, compliance: { ...embedded.compliance, allowLoopbackCallbacks: false } };
  const taskQueue = `sale-${randomUUID()}`;
  // What one worker process runs; replaceWorkers() starts another on the same queues, as a restart would.
  const startProcess = async () => {
    const sale = await startSaleService({
      connection: temporal.nativeConnection,
      client,
      namespace: temporal.namespace,
      services,
      config: { ...loadWorkerConfig({}), namespace: temporal.namespace, complianceRequestsPerMinute: (options.activitiesPerSecond ?? 50) * 60, complianceRateHeadroom: 0 },
      logger,
      taskQueue,
      workflowBundle: bundle,
    });
    return { sale, running: sale.run() };
  };
  const stopProcess = async ({ sale, running }: Awaited<ReturnType<typeof startProcess>>) => {
    sale.shutdown();
    await running;
    await sale.close();
  };
  let current = await startProcess();

  const state = (handle: WorkflowHandle) => handle.query(getSaleStateQuery);
  return {
    sandbox,
    client,
    taskQueue,
    get workers() {
      return current.sale.workers;
    },
    get callbacks() {
      return current.sale.callbacks;
    },
    get minter() {
      return current.sale.callbackUrls;
    },
    start: (input) =>
      client.workflow.start<SaleWorkflowType>('saleWorkflow', {
        taskQueue,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      }),
    state,
    waitFor: (handle, predicate, timeoutMs = 20_000) => eventually(() => state(handle), predicate, { timeoutMs, what: 'sale state' }),
    async replaceWorkers() {
      await stopProcess(current);
      current = await startProcess();
    },
    async close() {
      await stopProcess(current);
      await services.close();
    },
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
