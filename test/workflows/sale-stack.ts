/**
 * A real sale stack: the sandbox over HTTP, the real workers on their own task queues of a Temporal server,
 * and optionally the real callback receiver. No vitest here, so scripts/record-histories.ts can run the same
 * stack against a dev server it starts itself; tests use it through harness.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { NativeConnection, WorkflowBundle } from '@temporalio/worker';
import { pino } from 'pino';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { startCallbackServer, type CallbackServer } from '../../src/callbacks/server.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { DEMO, defaultComplianceFixtureInput } from '../../src/sandbox/default-fixture.js';
import type { ComplianceFixtureInput, ItemFixtureInput } from '../../src/sandbox/compliance/fixture-schema.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { createSaleWorkers, type SaleWorkers } from '../../src/worker.js';
import { getSaleStateQuery, saleWorkflowId, type SaleInput, type SaleState } from '../../workflows/definitions.js';

export { DEMO };

/** Where the stack's workers and clients reach Temporal. */
export interface TemporalAccess {
  client: Client;
  nativeConnection: NativeConnection;
  namespace: string;
}

export interface SaleStackOptions {
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
  /** Shuts the running workers down (as a crash or a deploy would) and starts new ones on the same queues. */
  replaceWorkers(): Promise<void>;
  close(): Promise<void>;
}

/** The demo world with authority delays and callback retries short enough for tests. */
export function fastFixture(adjust: (fixture: ComplianceFixtureInput) => void = () => {}): ComplianceFixtureInput {
  const fixture = structuredClone(defaultComplianceFixtureInput);
  fixture.authority = { ...fixture.authority, asyncDelayMs: 300 };
  fixture.callbacks = { retryScheduleMs: [0, 100, 200], timeoutMs: 1_000, outOfOrderHoldMs: 300 };
  adjust(fixture);
  return fixture;
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
  const sandbox = await startSandbox({ fixture: { compliance: options.fixture ?? fastFixture() } });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const taskQueue = `sale-${randomUUID()}`;
  let callbacks: CallbackServer | undefined;
  let minter: CallbackUrlMinter | undefined;
  if (options.callbacks) {
    const secret = randomUUID() + randomUUID();
    // Verifying a token needs only the secret, so the receiver can start before its URL is known.
    callbacks = await startCallbackServer({ minter: new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret }), client, logger });
    minter = new CallbackUrlMinter({ publicBaseUrl: callbacks.url, secret });
  }
  const compliance = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: DEMO.keys.orgWide, allowLoopbackCallbacks: true });
  const createWorkers = () =>
    createSaleWorkers({
      connection: temporal.nativeConnection,
      namespace: temporal.namespace,
      client,
      compliance,
      logger,
      complianceActivitiesPerSecond: options.activitiesPerSecond ?? 50,
      taskQueue,
      workflowBundle: bundle,
      ...(minter ? { callbackUrls: minter } : {}),
    });
  let workers = await createWorkers();
  let running = workers.run();

  const state = (handle: WorkflowHandle) => handle.query(getSaleStateQuery);
  return {
    sandbox,
    client,
    taskQueue,
    get workers() {
      return workers;
    },
    callbacks,
    minter,
    start: (input) =>
      client.workflow.start<SaleWorkflowType>('saleWorkflow', {
        taskQueue,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      }),
    state,
    async waitFor(handle, predicate, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      let last: SaleState | undefined;
      while (Date.now() < until) {
        last = await state(handle);
        if (predicate(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`condition not met in ${timeoutMs} ms; last state: ${JSON.stringify(last)}`);
    },
    async replaceWorkers() {
      workers.shutdown();
      await running;
      workers = await createWorkers();
      running = workers.run();
    },
    async close() {
      workers.shutdown();
      await running;
      await compliance.close();
      await callbacks?.close();
      await sandbox.close();
    },
  };
}

let counter = 0;
/**
 * A trader invoice number unique to this run and process (test files share one Temporal server and sale
 * workflow ids derive from it), with an optional authority-rule prefix (ASYNC-, REJECT-, …).
 */
export function invoiceNumber(prefix = 'INV-'): string {
  return `${prefix}${Date.now().toString(36)}-${randomUUID().slice(0, 6)}-${(counter++).toString(36)}`;
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
