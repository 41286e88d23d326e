/**
 * The fast layer of workflow tests: the real sale and item-registration workflows on the time-skipping test
 * server, with stub activities that answer what each test says and record every call. No sandbox, no HTTP:
 * what these tests show is the workflows' own logic (timeouts of hours, refund windows of days, parking and
 * operator updates), in milliseconds of wall time. A refund is its own workflow, which reads the closed sale's result
 * through the real findSignedSale activity.
 *
 * Each test runs in `harness.run(stubs, body)`: its own stubs and its own business id (hence its own workflow
 * ids), on the file's workers, and every execution it started is terminated when the body ends, so nothing of
 * it is left to hold the test server's clock (one environment per file; its tests run one after another).
 *
 * Two habits keep the test server (Java, 1.40.0) reliable, learned the hard way: stubs answer at once (never
 * wait on the test), and after an update or a signal between executions a test lets the work settle in real
 * time (`waitFor`, `settled`) before it skips time (`result()`, `env.sleep()`). Without them, workflow tasks
 * were seen to expire, a registration outcome to be lost (the sale then ran into its 10-year execution
 * timeout) and the clock to stay stuck for the rest of the file.
 */
import { fiscalDayEntryOf } from '../../src/contracts/fiscal-day.js';
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, type SearchAttributeType } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import type { Activities } from '../../activities/index.js';
import type { PurchasesActivities } from '../../activities/purchases.js';
import type { AccountingActivities } from '../../activities/accounting.js';
import type { ReconciliationActivities } from '../../activities/reconciliation.js';
import { createRefundActivities } from '../../activities/refund.js';
import { createStockLedgerActivities } from '../../activities/stock-ledger.js';
import {
  STOCK_LEDGER_WORKFLOW_TYPE,
  getStockLedgerStateQuery,
  FIRST_BRANCH,
  stockLedgerWorkflowId,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import { createRegistrationActivities } from '../../activities/registration.js';
import { createOutageWatchActivities } from '../../activities/outage-watch.js';
import { outageWatchWorkflowId } from '../../src/contracts/outage-watch.js';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import {
  REFUND_WORKFLOW_TYPE,
  getRefundStateQuery,
  refundUpdate,
  refundWorkflowId,
  type RefundInput,
} from '../../src/contracts/refund.js';
import type {
  AuthorityCause,
  ItemCheck,
  SubmissionResult,
  AdjustStockInput,
  AdjustStockResult,
} from '../../activities/types.js';
import type { AnySearchAttributeKey } from '../../src/contracts/search-attributes.js';
import {
  SALE_WORKFLOW_TYPE,
  getSaleStateQuery,
  saleWorkflowId,
  type FiscalDocument,
  type ReceiptSummary,
  type RefundRequest,
  type RefundResult,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import {
  getItemRegistrationStateQuery,
  itemRegistrationWorkflowId,
  type ItemRegistrationState,
} from '../../src/contracts/item-registration.js';
import { eventually } from '../helpers/eventually.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { createTimeSkippingEnv, terminateKeepingClock } from '../helpers/time-skipping.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';
import { startQueueWorkers, useWorld } from '../helpers/time-skipping-world.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export type ActivityName = keyof Activities;
export type ActivityInput<N extends ActivityName> = Parameters<Activities[N]>[0];

export interface ActivityCall<N extends ActivityName = ActivityName> {
  name: N;
  input: ActivityInput<N>;
  attempt: number;
  /** Server time (skipped time included) at which this attempt was scheduled. */
  scheduledAtMs: number;
  taskQueue: string;
  /** The workflow type that scheduled it: the sale, an item registration, or the branch's stock ledger. */
  workflowType: string;
}

export type SaleWorkflowType = (input: SaleInput) => Promise<SaleState>;
export type SaleHandle = WorkflowHandle<SaleWorkflowType>;
export type RefundWorkflowType = (input: RefundInput) => Promise<RefundResult>;
export type RefundHandle = WorkflowHandle<RefundWorkflowType>;

/** A refund as a client asks it: its workflow, and the answer of its `refund` update (already handled if it fails). */
export interface RefundCall {
  handle: RefundHandle;
  answer: Promise<RefundResult>;
}

// ---------------------------------------------------------------------------------------------------------
// Documents as the activities return them
// ---------------------------------------------------------------------------------------------------------

export function receipt(cuInvoiceNo = 'KRACU0100000001/1', originalCuInvoiceNo: string | null = null): ReceiptSummary {
  return {
    cuInvoiceNo,
    receiptNumber: 1,
    receiptLabel: originalCuInvoiceNo ? 'NC' : 'NS',
    scuId: 'KRACU0100000001',
    scuDate: '21/11/2026',
    scuTime: '10:00:00',
    totalReceiptCounter: '1',
    signature: 'V3ZP-5XJH-2T6K-QJ4N',
    internalData: 'A1B2-C3D4-E5F6-G7H8',
    verificationUrl: 'https://etims.example/verify/1',
    originalCuInvoiceNo,
  };
}

/** A sale as the service answers it; `completed` with a receipt unless told otherwise. */
export function saleDocument(overrides: Partial<FiscalDocument> = {}): FiscalDocument {
  const status = overrides.status ?? 'completed';
  return {
    id: 'sal_1',
    type: 'sale',
    status,
    traderInvoiceNumber: 'INV-1',
    totals: { total: 565, taxableAmount: 487.07, taxAmount: 77.93 },
    receipt: status === 'completed' ? receipt() : null,
    error: status === 'failed' ? 'failed by the authority' : null,
    ...overrides,
  };
}

export function creditNoteDocument(overrides: Partial<FiscalDocument> = {}): FiscalDocument {
  return saleDocument({
    id: 'crn_1',
    type: 'credit_note',
    totals: { total: -565, taxableAmount: -487.07, taxAmount: -77.93 },
    receipt: receipt('KRACU0100000001/2', 'KRACU0100000001/1'),
    ...overrides,
  });
}

/** What createSale / retrySale / createCreditNote answer, by the document's state. */
export const submission = {
  signed: (document: FiscalDocument): SubmissionResult => ({
    outcome: 'signed',
    httpStatus: 201,
    replayed: false,
    document,
    causes: [],
  }),
  inFlight: (document: FiscalDocument): SubmissionResult => ({
    outcome: 'in_flight',
    httpStatus: 202,
    replayed: false,
    document,
    causes: [],
  }),
  rejected: (document: FiscalDocument, causes: AuthorityCause[]): SubmissionResult => ({
    outcome: 'rejected',
    httpStatus: 422,
    replayed: false,
    document,
    causes,
  }),
  /** What the activity reports for a document of any other status (cancelled, or completed without a receipt). */
  unknown: (document: FiscalDocument): SubmissionResult => ({
    outcome: 'unknown',
    httpStatus: 201,
    replayed: false,
    document,
    causes: [],
  }),
};

// ---------------------------------------------------------------------------------------------------------
// Stub activities
// ---------------------------------------------------------------------------------------------------------

/** The happy path: every item registered and stock-tracked, every document signed at once, every write taken. */
/** Activities of other processes, which the sale and ledger scenarios never call. */
type OtherProcesses =
  | 'createCatalogueItem'
  | 'findCatalogueItem'
  | keyof PurchasesActivities
  | 'tellStockIn'
  | 'readPurchaseBooks'
  | 'writePurchaseBooks'
  | 'matchItemNames'
  | 'findStockInMappings'
  | 'changeStockInMappings'
  | 'waitForStockRoom'
  | 'deliverFiscalDay'
  | 'findTillSales'
  | 'recoverFiscalDay'
  | keyof ReconciliationActivities
  | keyof AccountingActivities;

function defaultStubs(): Omit<
  Activities,
  'requestItemRegistration' | 'handOverStock' | 'joinOutageWatch' | 'findSignedSale' | 'signSale' | OtherProcesses
> {
  const stock = stockModel();
  return {
    async placeBusiness({ businessId }) {
      return { application: 'default', fairnessKey: businessId };
    },
    async checkItems({ itemIds }) {
      const items: ItemCheck[] = itemIds.map((itemId) => ({
        itemId,
        registered: true,
        stockTracked: true,
        unitPrice: null,
      }));
      return { items };
    },
    async registerItem() {
      return { outcome: 'registered' };
    },
    async createSale({ request }) {
      return submission.signed(saleDocument({ traderInvoiceNumber: request.traderInvoiceNumber }));
    },
    async retrySale({ documentId }) {
      return submission.signed(saleDocument({ id: documentId }));
    },
    async getDocument({ documentId }) {
      return { document: signedDocument(documentId) };
    },
    async awaitDocumentOutcome({ documentId }) {
      return { document: signedDocument(documentId) };
    },
    async adjustStock(input) {
      return stock.apply(input);
    },
    async createCreditNote({ traderInvoiceNumber }) {
      return submission.signed(creditNoteDocument({ traderInvoiceNumber }));
    },
    // The day book counts by receipt number: what the sale enters is the fiscal-day tests' to check.
    async enterFiscalDay(input) {
      return { workflowId: `fiscal-day:${input.taskQueue}:${input.businessId}:${input.scuId}:${input.date}` };
    },
    // The service's record of sale INV-1 (a test refunding a sale past its workflow's retention names its own).
    async readSaleRecord({ documentId }) {
      return {
        document: saleDocument({ id: documentId }),
        saleDate: '2026-11-21',
        lines: [{ itemId: 'itm_sugar_2kg', quantity: 2, unitPrice: 250 }],
      };
    },
  };
}

/**
 * signSale as the real activity composes it: the item check, then the sale when every item is registered, then the
 * signed sale's stock-tracked lines to the ledger. Made of the test's (recorded) checkItems, createSale and
 * handOverStock, so a test stubs and observes those as it always has.
 */
function signSaleFrom(
  stubs: Pick<Activities, 'checkItems' | 'createSale' | 'handOverStock' | 'enterFiscalDay'>,
): Activities['signSale'] {
  return async (input) => {
    const { items } = await stubs.checkItems({ businessId: input.businessId, itemIds: input.itemIds });
    if (items.some((item) => !item.registered)) return { items };
    const { itemIds: _itemIds, handOver, dayBook: book, ...filing } = input;
    const submission = await stubs.createSale(filing);
    if (!isSigned(submission.document)) return { items, submission };
    const tracked = new Set(items.filter((item) => item.stockTracked).map((item) => item.itemId));
    const lines = handOver?.lines.filter((line) => tracked.has(line.itemId)) ?? [];
    const handedOver =
      handOver && lines.length > 0
        ? await stubs
            .handOverStock({
              businessId: input.businessId,
              ...(input.request.branchId ? { branchId: input.request.branchId } : {}),
              lines,
              taskQueue: handOver.taskQueue,
            })
            .then(
              ({ ledgerWorkflowId }) => ({ ledgerWorkflowId }),
              () => undefined,
            )
        : undefined;
    const entry = fiscalDayEntryOf(input.businessId, submission.document, Date.now(), input.request.branchId);
    const dayBook =
      book && entry
        ? await stubs.enterFiscalDay({ ...entry, entries: [entry.entry], taskQueue: book.taskQueue }).then(
            ({ workflowId }) => ({ workflowId }),
            () => undefined,
          )
        : undefined;
    return { items, submission, ...(handedOver ? { handedOver } : {}), ...(dayBook ? { dayBook } : {}) };
  };
}

/**
 * The service's stock as C28 has it: a quantity on hand per branch and item (100 to begin with), never below 0, and
 * every movement recorded; one naming no branch moves the first, whose id is FIRST_BRANCH. A stub that fails after the
 * service took the movement calls `apply` first.
 */
export function stockModel(initial = 100) {
  const onHand = new Map<string, number>();
  const recorded: Array<AdjustStockInput & { movementId: string; quantityOnHand: number }> = [];
  return {
    recorded,
    onHand: (itemId: string, branchId?: string) => onHand.get(`${branchId ?? FIRST_BRANCH}|${itemId}`) ?? initial,
    /** What someone else does at the branch: a movement the ledger did not send. */
    move(itemId: string, delta: number, branchId?: string) {
      const key = `${branchId ?? FIRST_BRANCH}|${itemId}`;
      onHand.set(key, Math.max(0, (onHand.get(key) ?? initial) + delta));
    },
    async apply(input: AdjustStockInput): Promise<AdjustStockResult> {
      const key = `${input.branchId ?? FIRST_BRANCH}|${input.itemId}`;
      const before = onHand.get(key) ?? initial;
      const after =
        Math.round(Math.max(0, input.action === 'ADD' ? before + input.quantity : before - input.quantity) * 10_000) /
        10_000;
      onHand.set(key, after);
      const movementId = `mov_${recorded.length + 1}`;
      recorded.push({ ...input, movementId, quantityOnHand: after });
      return { movementId, quantityOnHand: after };
    },
  };
}

export type StockModel = ReturnType<typeof stockModel>;

/** The signed sale or credit note (ids `crn_…`) a read finds. */
function signedDocument(documentId: string): FiscalDocument {
  return documentId.startsWith('crn_') ? creditNoteDocument({ id: documentId }) : saleDocument({ id: documentId });
}

/** A non-retryable failure of an activity, as activities/failures.ts maps a final refusal of the service. */
export function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

// ---------------------------------------------------------------------------------------------------------
// One test's world
// ---------------------------------------------------------------------------------------------------------

export interface Scenario {
  env: TestWorkflowEnvironment;
  /** The sale queue (the file's); API activities run on complianceTaskQueue(taskQueue). */
  taskQueue: string;
  /** A business id no other test uses (item-registration workflow ids derive from it). */
  businessId: string;
  saleInput(overrides?: Partial<SaleInput>): SaleInput;
  startSale(input: SaleInput): Promise<SaleHandle>;
  state(handle: WorkflowHandle): Promise<SaleState>;
  /** Polls the state query (in real time: the clock does not skip meanwhile) until `predicate` holds. */
  waitFor(handle: WorkflowHandle, predicate: (s: SaleState) => boolean, timeoutMs?: number): Promise<SaleState>;
  /**
   * The result of a sale that finishes without waiting on a timer, awaited in real time first. Use it after an
   * update or a signal between executions: if the test server's clock skips while the work they set off is
   * still in flight, workflow tasks have been seen to time out and outcomes to be lost.
   */
  settled(handle: SaleHandle, timeoutMs?: number): Promise<SaleState>;
  registration(itemId: string): WorkflowHandle;
  registrationState(itemId: string): Promise<ItemRegistrationState>;
  /**
   * Starts the sale's refund workflow (unless one runs) and sends it the `refund` update, as the client's
   * update-with-start does (the test server has no update-with-start).
   */
  refund(traderInvoiceNumber: string, request: RefundRequest): Promise<RefundCall>;
  refundHandle(traderInvoiceNumber: string): RefundHandle;
  refundState(handle: WorkflowHandle): Promise<SaleState>;
  /** Polls the refund's state query, in real time, until `predicate` holds. */
  waitForRefund(handle: WorkflowHandle, predicate: (s: SaleState) => boolean, timeoutMs?: number): Promise<SaleState>;
  /**
   * How a run ended once it closed (polled in real time), read from its history: awaiting a result lets the test
   * server skip time, up to the next timer of anything still open (a parked sale's execution timeout, say).
   */
  ended(handle: WorkflowHandle): Promise<RunEnd>;
  /** Every stub call so far, in order. */
  calls: ActivityCall[];
  /** Inputs of the calls of one activity, in order. */
  inputs<N extends ActivityName>(name: N): Array<ActivityInput<N>>;
  /**
   * Names of the calls of the sale (and its item registrations), in order, without the polls (awaitDocumentOutcome),
   * whose number depends on timing; the stock ledger's calls are `ledgerCalls`.
   */
  sequence(): ActivityName[];
  /** The calls the branch's stock ledger made (probes included). */
  ledgerCalls(): ActivityCall[];
  /** The stock movements the ledger sent, in order, without its probes (quantity 0). */
  movementsSent(): AdjustStockInput[];
  ledger(branchId?: string): WorkflowHandle;
  ledgerState(branchId?: string): Promise<StockLedgerState>;
  searchAttribute<T extends SearchAttributeType>(
    handle: WorkflowHandle,
    key: AnySearchAttributeKey & { type: T },
  ): Promise<unknown>;
}

export type StubOverrides = Partial<Activities>;

export interface RunEnd {
  status: string;
  /** The failure a failed run ended with. */
  failure?: { type: string | undefined; message: string | undefined; nonRetryable: boolean | undefined };
}

export interface LogicHarness {
  readonly env: TestWorkflowEnvironment;
  run<T>(stubs: StubOverrides, body: (s: Scenario) => Promise<T>): Promise<T>;
}

/**
 * A time-skipping server with one pair of real workers on it, as src/worker/workers.ts runs them: the sale queue runs
 * the workflows and requestItemRegistration, its compliance queue the API activities. Each activity is handed
 * to the stubs of the test whose business id it carries (every activity input has one).
 */
interface World {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  stubsByBusiness: Map<string, Activities>;
  /** Rejects if a worker stops before close(). */
  running: Promise<void>;
  close(): Promise<void>;
}

const ACTIVITY_NAMES = [
  ...Object.keys(defaultStubs()),
  'requestItemRegistration',
  'handOverStock',
  'joinOutageWatch',
  'findSignedSale',
  'signSale',
] as ActivityName[];

async function createWorld(): Promise<World> {
  const [env, bundle] = await Promise.all([createTimeSkippingEnv(), workflowBundle()]);
  const taskQueue = `sale-logic-${randomUUID().slice(0, 8)}`;
  const stubsByBusiness = new Map<string, Activities>();
  const dispatch = (name: ActivityName) => async (input: { businessId: string }) => {
    const stubs = stubsByBusiness.get(input.businessId);
    if (!stubs)
      throw ApplicationFailure.create({
        type: 'no_test',
        message: `no test runs business ${input.businessId}`,
        nonRetryable: true,
      });
    return (stubs[name] as (input: unknown) => Promise<unknown>)(input);
  };
  const workers = await startQueueWorkers(
    env,
    taskQueue,
    bundle,
    Object.fromEntries(ACTIVITY_NAMES.map((name) => [name, dispatch(name)])),
  );
  return {
    env,
    taskQueue,
    stubsByBusiness,
    running: workers.running,
    async close() {
      await workers.close();
      await env.teardown();
    },
  };
}

export function useLogicHarness(): LogicHarness {
  const world = useWorld(createWorld);
  return {
    get env() {
      return world.env;
    },
    run: async (stubs, body) => runScenario(await world.current(), stubs, body),
  };
}

async function runScenario<T>(world: World, overrides: StubOverrides, body: (s: Scenario) => Promise<T>): Promise<T> {
  const { env, taskQueue } = world;
  const id = randomUUID().slice(0, 8);
  const businessId = `biz_logic_${id}`;
  const calls: ActivityCall[] = [];
  // Not the business's stock ledger: an idle ledger ends by itself (its timer is skipped to).
  const started = new Set<string>();

  const real = createRegistrationActivities({ temporal: { client: env.client }, logger: pino({ level: 'silent' }) });
  const implementations: Omit<Activities, 'signSale' | OtherProcesses> & Partial<Pick<Activities, 'signSale'>> = {
    ...defaultStubs(),
    requestItemRegistration: real.requestItemRegistration,
    // The real hand-over: the branch's stock ledger runs on this world's workers, its movements through the stubs.
    // The stub service's businesses have one branch each, whose id is FIRST_BRANCH.
    handOverStock: createStockLedgerActivities({
      temporal: { client: env.client },
      logger: pino({ level: 'silent' }),
      canonicalBranch: async (_businessId, named) => named ?? FIRST_BRANCH,
    }).handOverStock,
    // The real outage watch, on this world's workers: sales waiting out an outage wait on it.
    joinOutageWatch: createOutageWatchActivities({
      temporal: { client: env.client },
      logger: pino({ level: 'silent' }),
    }).joinOutageWatch,
    // The real read of the sale's workflow: a refund finds what the sale of the test closed with.
    findSignedSale: createRefundActivities({ temporal: { client: env.client } }).findSignedSale,
    ...overrides,
  };
  const recorded = Object.fromEntries(
    Object.entries(implementations).map(([name, fn]) => [
      name,
      async (input: never) => {
        const { info } = Context.current();
        calls.push({
          name: name as ActivityName,
          input,
          attempt: info.attempt,
          scheduledAtMs: info.currentAttemptScheduledTimestampMs,
          taskQueue: info.taskQueue,
          workflowType: info.workflowType ?? '',
        });
        if (name === 'requestItemRegistration') {
          const { businessId: b, itemId } = input as ActivityInput<'requestItemRegistration'>;
          started.add(itemRegistrationWorkflowId(b, itemId));
        }
        if (name === 'joinOutageWatch') {
          const { complianceQueue, fairnessKey } = input as ActivityInput<'joinOutageWatch'>;
          started.add(outageWatchWorkflowId(complianceQueue, fairnessKey));
        }
        return (fn as (input: never) => Promise<unknown>)(input);
      },
    ]),
  ) as unknown as Activities;
  if (!overrides.signSale) recorded.signSale = signSaleFrom(recorded);
  world.stubsByBusiness.set(businessId, recorded);

  const client = env.client;
  const state = (handle: WorkflowHandle) => handle.query(getSaleStateQuery);
  const refundState = (handle: WorkflowHandle) => handle.query(getRefundStateQuery);
  const refundHandle = (tin: string) =>
    client.workflow.getHandle<RefundWorkflowType>(refundWorkflowId(businessId, tin));
  const scenario: Scenario = {
    env,
    taskQueue,
    businessId,
    saleInput: (o = {}) => ({
      businessId,
      traderInvoiceNumber: invoiceNumber(),
      saleDate: '2026-11-21',
      lines: [
        { itemId: 'itm_sugar_2kg', quantity: 2, unitPrice: 250 },
        { itemId: 'itm_milk_500ml', quantity: 1, unitPrice: 65 },
      ],
      ...o,
    }),
    async startSale(input) {
      const workflowId = saleWorkflowId(input.businessId, input.traderInvoiceNumber);
      started.add(workflowId);
      return client.workflow.start<SaleWorkflowType>(SALE_WORKFLOW_TYPE, { taskQueue, workflowId, args: [input] });
    },
    state,
    waitFor: (handle, predicate, timeoutMs = 10_000) =>
      eventually(() => state(handle), predicate, { timeoutMs, intervalMs: 10, what: 'sale state' }),
    async settled(handle, timeoutMs) {
      await scenario.waitFor(
        handle,
        (st) => st.step === 'completed' || st.step === 'cancelled' || st.step === 'failed',
        timeoutMs,
      );
      return handle.result();
    },
    async refund(traderInvoiceNumber, request) {
      const workflowId = refundWorkflowId(businessId, traderInvoiceNumber);
      started.add(workflowId);
      const input: RefundInput = { businessId, traderInvoiceNumber, request };
      try {
        await client.workflow.start<RefundWorkflowType>(REFUND_WORKFLOW_TYPE, {
          taskQueue,
          workflowId,
          args: [input],
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      const handle = refundHandle(traderInvoiceNumber);
      const answer = handle.executeUpdate(refundUpdate, { args: [request] });
      answer.catch(() => undefined);
      return { handle, answer };
    },
    refundHandle,
    refundState,
    waitForRefund: (handle, predicate, timeoutMs = 10_000) =>
      eventually(() => refundState(handle), predicate, { timeoutMs, intervalMs: 10, what: 'refund state' }),
    async ended(handle) {
      const { status } = await eventually(
        () => handle.describe(),
        (d) => d.status.name !== 'RUNNING',
        { timeoutMs: 10_000, intervalMs: 20, what: `${handle.workflowId} closed` },
      );
      const events = (await handle.fetchHistory()).events ?? [];
      const failure = events.at(-1)?.workflowExecutionFailedEventAttributes?.failure;
      return {
        status: status.name,
        ...(failure
          ? {
              failure: {
                type: failure.applicationFailureInfo?.type ?? undefined,
                message: failure.message ?? undefined,
                nonRetryable: failure.applicationFailureInfo?.nonRetryable ?? undefined,
              },
            }
          : {}),
      };
    },
    registration: (itemId) => client.workflow.getHandle(itemRegistrationWorkflowId(businessId, itemId)),
    registrationState: (itemId) =>
      client.workflow.getHandle(itemRegistrationWorkflowId(businessId, itemId)).query(getItemRegistrationStateQuery),
    calls,
    inputs: <N extends ActivityName>(name: N) =>
      calls.filter((c) => c.name === name).map((c) => c.input as ActivityInput<N>),
    // Placement asks the worker, not a service: scenarios that check it read inputs('placeBusiness').
    sequence: () =>
      calls
        .filter((c) => c.workflowType !== STOCK_LEDGER_WORKFLOW_TYPE)
        .map((c) => c.name)
        .filter((n) => n !== 'awaitDocumentOutcome' && n !== 'placeBusiness'),
    ledgerCalls: () => calls.filter((c) => c.workflowType === STOCK_LEDGER_WORKFLOW_TYPE),
    movementsSent: () =>
      calls
        .filter(
          (c): c is ActivityCall<'adjustStock'> =>
            c.workflowType === STOCK_LEDGER_WORKFLOW_TYPE && c.name === 'adjustStock',
        )
        .map((c) => c.input)
        .filter((m) => m.quantity > 0),
    ledger: (branchId = FIRST_BRANCH) =>
      client.workflow.getHandle(stockLedgerWorkflowId(taskQueue, businessId, branchId)),
    ledgerState: (branchId = FIRST_BRANCH) =>
      client.workflow.getHandle(stockLedgerWorkflowId(taskQueue, businessId, branchId)).query(getStockLedgerStateQuery),
    searchAttribute: async (handle, key) => (await handle.describe()).typedSearchAttributes.get(key),
  };

  // An execution left open would stop the test server's clock for every later test of the file: terminate what
  // is still running when the body ends (twice: an activity still under way may start a registration run).
  const terminateOpen = async () => {
    for (const workflowId of started) {
      const handle = client.workflow.getHandle(workflowId);
      const status = await handle.describe().then(
        (d) => d.status.name,
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
          throw err;
        },
      );
      if (status === 'RUNNING') await terminateKeepingClock(env, handle);
    }
  };
  try {
    // A worker that stops (a workflow bundle that fails to load, say) fails the test instead of hanging it.
    return await Promise.race([body(scenario), world.running.then(() => never<T>())]);
  } finally {
    await terminateOpen();
    await terminateOpen();
    world.stubsByBusiness.delete(businessId);
  }
}

function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}
