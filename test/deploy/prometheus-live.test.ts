/**
 * The dashboard and the alert rules against what really happened: a real Prometheus (1 s scrapes and rule
 * evaluations, deploy/prometheus/rules.yml) scrapes a real worker process (`src/cli/worker.ts`) while the test drives
 * sales down every path an operator counts (signed, refunded, parked, cancelled, failed, a stock movement its branch's
 * ledger leaves to an operator, 429s), runs purchases syncs into a webhook receiver that goes down, and a reconciliation. Then every
 * dashboard expression goes to Prometheus, each count panel is compared with the true count, and exactly the
 * alerts whose cause the test produced must be pending or firing (their `for:` is promtool's unit tests' business).
 *
 * The worker runs in a namespace of its own on the run's dev server: the CLI worker always takes the `sales` queue,
 * and other test files run workers on `sales` in the shared namespace, which would take (and count) these sales.
 *
 * Needs Debian's `prometheus` package (`prometheus` and `promtool`): CI fails without it; elsewhere the test is
 * skipped, saying why.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  Connection,
  ScheduleOverlapPolicy,
  WorkflowFailedError,
  type ApplicationFailure,
} from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_RECONCILIATION_LINK,
} from '../../sandbox/accounting/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { payloadEncryptionFromEnv } from '../../src/codec/data-converter.js';
import { syncPurchasesNow } from '../../src/client/purchases.js';
import { SalesClient } from '../../src/client/sales-client.js';
import { PURCHASES_SYNC_WORKFLOW_TYPE } from '../../src/contracts/purchases-sync.js';
import { RECONCILIATION_WORKFLOW_TYPE, reconciliationScheduleId } from '../../src/contracts/reconciliation.js';
import { SALE_WORKFLOW_TYPE, saleWorkflowId, type SaleInput, type SaleState } from '../../src/contracts/sale.js';
import {
  STOCK_LEDGER_WORKFLOW_TYPE,
  getStockLedgerStateQuery,
  stockLedgerWorkflowId,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import { projectSearchAttributes } from '../../src/contracts/search-attributes.js';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import { OPERATOR_WORKFLOW_TYPES, type CounterName } from '../../src/metrics/catalogue.js';
import { ensureSearchAttributes } from '../../src/temporal/ensure-search-attributes.js';
import {
  dashboardQueries,
  EVENT_COUNT_PANELS,
  OPERATOR_WORK_PANEL,
  type DashboardQuery,
} from '../helpers/dashboard.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { findExecutable, promtool, startPrometheus, type Prometheus, type Sample } from '../helpers/prometheus.js';
import { freePort } from '../../tools/free-port.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const RULES = path.join(root, 'deploy/prometheus/rules.yml');

const JOB = 'etims-worker';
const NAIROBI = DEMO.businesses.nairobi;
/** The dashboard's time range: longer than the test, so its count panels count everything the test did. */
const RANGE = '1h';

const SECRETS = {
  COMPLIANCE_API_KEY: DEMO.keys.nairobi,
  ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
  ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
  CALLBACK_SECRET: 'prometheus-live-callback-secret-0123456789',
  PURCHASES_WEBHOOK_SECRET: 'whsec_cHJvbWV0aGV1cy1saXZlLXB1cmNoYXNlcy1zaW5r',
  PAYLOAD_KEYS: 'live-1:CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=',
};

/**
 * Sale submissions answered 429 (Retry-After 0, so each costs a 100 ms retry): more than EtimsApiRateLimited's 10,
 * one per sale of the first wave.
 */
const RATE_LIMITED_SUBMISSIONS = 12;

/**
 * The alerts whose cause the test produces. Every other rule must stay quiet: EtimsComplianceBudgetSpent needs 90 %
 * of a budget the test cannot spend in time, the "not succeeding" rules hours of history; EtimsWorkerMetricsGone
 * comes last, when the worker stops.
 */
const ALERTS_CAUSED = [
  'EtimsSalesFailed',
  'EtimsSalesFailingOften',
  'EtimsSalesParkingOften',
  'EtimsOperatorWorkWaiting',
  'EtimsApiRateLimited',
  'EtimsComplianceRateWindowSpent',
  'EtimsPurchasesSinkDown',
  'EtimsStockMovementNeedsOperator',
];
const WORKER_GONE_ALERT = 'EtimsWorkerMetricsGone';

const missing = (['prometheus', 'promtool'] as const).filter((name) => findExecutable(name) === undefined);
const skipReason =
  missing.length === 0 ? undefined : `${missing.join(' and ')} not installed (Debian: apt-get install prometheus)`;

if (skipReason && !process.env.CI) console.log(`test/deploy/prometheus-live.test.ts skipped: ${skipReason}`);
if (skipReason && process.env.CI) {
  describe('a real Prometheus scraping a running worker', () => {
    it("has prometheus and promtool installed (CI installs Debian's prometheus)", () => {
      throw new Error(skipReason);
    });
  });
}

/** The business's system as the purchases sink: takes every event until told to refuse (a 4xx: final). */
interface WebhookReceiver {
  url: string;
  /** Ids of the events taken. */
  accepted: Set<string>;
  /** Deliveries refused. */
  refused: number;
  refuse(): void;
  close(): Promise<void>;
}

async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let refusing = false;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (refusing) {
        receiver.refused++;
        response.writeHead(400).end();
      } else {
        receiver.accepted.add(String(request.headers['webhook-id']));
        response.writeHead(204).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/purchases`,
    accepted: new Set(),
    refused: 0,
    refuse: () => (refusing = true),
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
  return receiver;
}

/** What happened, as the test saw it happen: what the dashboard must show. */
class TrueCounts {
  private readonly counters = new Map<CounterName, number>();
  /** Workflows left waiting for an operator, by workflow type. */
  private readonly waiting = new Map<string, number>();

  add(name: CounterName, by = 1): void {
    this.counters.set(name, this.of(name) + by);
  }

  of(name: CounterName): number {
    return this.counters.get(name) ?? 0;
  }

  names(): CounterName[] {
    return [...this.counters.keys()];
  }

  leaveWaiting(workflowType: string): void {
    this.waiting.set(workflowType, this.waitingOf(workflowType) + 1);
  }

  waitingOf(workflowType: string): number {
    return this.waiting.get(workflowType) ?? 0;
  }
}

interface Row {
  panel: string;
  dashboard: number | undefined;
  truth: number;
}

describe.skipIf(skipReason !== undefined)(
  `a real Prometheus scraping a running worker${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    const truth = new TrueCounts();
    /** What the last purchases sync could not deliver, by its own result (a level, not a count). */
    let pendingAfterLastSync = 0;
    let sandbox: Sandbox | undefined;
    let receiver: WebhookReceiver | undefined;
    let prometheus: Prometheus | undefined;
    let worker: ChildProcess | undefined;
    let workerOutput = '';
    let connection: Connection | undefined;
    let client: Client;
    let sales: SalesClient;
    let metricsUrl: string;
    /** The last scrape after every event: where the dashboard is read, as Grafana would read it then. */
    let readAt: number;
    const started = Date.now();
    const timings: string[] = [];
    const mark = (what: string) => timings.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s  ${what}`);

    beforeAll(async () => {
      const [metricsPort, callbackPort] = [await freePort(), await freePort()];
      metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      // Prometheus first, scraping before the worker listens: its first sample of every counter is the zero the worker
      // publishes at start, before anything (the start-up purchases sync included) can count.
      prometheus = await startPrometheus({
        jobs: [{ job: JOB, target: `127.0.0.1:${metricsPort}` }],
        ruleFiles: existsSync(RULES) ? [RULES] : [],
        intervalSeconds: 1,
      });
      const namespace = `prometheus-live-${randomUUID().slice(0, 8)}`;
      let temporal: Connection;
      [sandbox, temporal, receiver] = await Promise.all([
        startSandbox({
          fixture: {
            compliance: fastFixture((fixture) => {
              // Only the injected 429s: the application's real window is far from spent.
              for (const application of fixture.applications ?? []) application.requestsPerMinute = 100_000;
            }),
          },
        }),
        Connection.connect({ address: inject('temporalAddress') }),
        startWebhookReceiver(),
        eventually(
          () => prometheus!.targets(),
          (targets) => targets.some((t) => !t.lastScrape.startsWith('0001-')),
          {
            timeoutMs: 20_000,
            what: 'Prometheus scraping',
          },
        ),
      ]);
      connection = temporal;
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      await ensureSearchAttributes(connection, namespace, projectSearchAttributes);
      mark('Prometheus scraping, sandbox and namespace ready');

      worker = spawn(tsx, ['src/cli/worker.ts'], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          LOG_LEVEL: 'info',
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: namespace,
          COMPLIANCE_BASE_URL: sandbox.complianceUrl,
          ACCOUNTING_BASE_URL: sandbox.accountingUrl,
          ...SECRETS,
          COMPLIANCE_REQUESTS_PER_MINUTE: '6000',
          WORKER_MAKE_CURRENT: 'true',
          METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
          // The count a deployment makes every minute, every 5 s here, so the test need not wait a minute for it.
          OPERATOR_WORK_COUNT_INTERVAL: '5s',
          COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
          CALLBACK_PUBLIC_BASE_URL: `http://127.0.0.1:${callbackPort}`,
          CALLBACK_HOST: '127.0.0.1',
          CALLBACK_PORT: String(callbackPort),
          PURCHASES_SINK: receiver.url,
          PURCHASES_SYNC_BUSINESSES: NAIROBI,
          // An interval schedule fires on the clock's multiples of it (the default 15 m at :00, :15, …): a run across
          // one counted a sync the test never asked for. A week's fall on Thursdays at midnight UTC.
          PURCHASES_SYNC_INTERVAL: '7d',
          RECONCILE_LINKS: `${DEMO_RECONCILIATION_LINK.businessId}=${DEMO_RECONCILIATION_LINK.companyId}`,
        },
      });
      worker.stdout?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
      worker.stderr?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
      await eventually(
        () => (worker!.exitCode === null ? workerOutput : `exited ${worker!.exitCode}: ${workerOutput}`),
        (text) => text.includes('worker running') || text.startsWith('exited'),
        { timeoutMs: 60_000, intervalMs: 200, what: 'worker running' },
      );
      if (worker.exitCode !== null) throw new Error(`the worker exited: ${workerOutput}`);
      mark('worker running');
      const { dataConverter } = payloadEncryptionFromEnv({ PAYLOAD_KEYS: SECRETS.PAYLOAD_KEYS });
      client = new Client({ connection, namespace, dataConverter });
      sales = new SalesClient(client);
      // Every event after Prometheus holds the zero before it (increase() counts from there).
      await eventually(
        () => prometheus!.query(`etims_sales_signed_total{job="${JOB}"}`),
        ({ data }) => data.resultType === 'vector' && data.result.length === 1,
        {
          timeoutMs: 15_000,
          intervalMs: 250,
          what: 'the worker scraped by Prometheus',
        },
      );
      mark('worker scraped');

      await drive();
      mark('every path driven');
      // The worker counts operator work every 5 s here: meanwhile, the service's window runs out.
      await Promise.all([waitForOperatorWork(), saleHeldBySpentWindow()]);
      mark('operator work counted');
      const lastEvent = Date.now() / 1000;
      readAt = await eventually(
        () => lastScrapeAt(),
        (at) => at > lastEvent + 0.5,
        { timeoutMs: 10_000, intervalMs: 250, what: 'a scrape after the last event' },
      );
      mark('scraped after the last event');
    }, 150_000);

    afterAll(async () => {
      await stopWorker();
      await prometheus?.stop();
      await sandbox?.close();
      await receiver?.close();
      await connection?.close();
      console.log(`timings (from the start of the file):\n  ${timings.join('\n  ')}`);
    });

    async function stopWorker(): Promise<void> {
      if (!worker || worker.exitCode !== null) return;
      const exited = new Promise((resolve) => worker!.once('close', resolve));
      worker.kill('SIGTERM');
      await exited;
    }

    // -------------------------------------------------------------------------------------------------------------
    // The paths, each tallying what it saw happen
    // -------------------------------------------------------------------------------------------------------------

    /** A sale of the gift voucher, which is not stock tracked: the only stock movement is the one the test faults. */
    function saleInput(overrides: Partial<SaleInput> = {}): SaleInput {
      return {
        businessId: NAIROBI,
        traderInvoiceNumber: invoiceNumber(),
        saleDate: '2026-11-21',
        lines: [{ itemId: DEMO.items.giftVoucher, quantity: 1, unitPrice: 1000 }],
        options: { refundWindowDays: 0 },
        ...overrides,
      };
    }

    const handleOf = (input: SaleInput) =>
      client.workflow.getHandle(saleWorkflowId(input.businessId, input.traderInvoiceNumber));
    const waitForState = (input: SaleInput, done: (s: SaleState) => boolean, what: string) =>
      eventually(() => sales.getState(input.businessId, input.traderInvoiceNumber), done, {
        timeoutMs: 30_000,
        intervalMs: 200,
        what,
      });

    async function signedSale(prefix = 'INV-'): Promise<void> {
      const input = saleInput({ traderInvoiceNumber: invoiceNumber(prefix) });
      await sales.startSale(input);
      const state = (await handleOf(input).result()) as SaleState;
      expect(state.sale?.status).toBe('completed');
      truth.add('etims_sales_signed');
    }

    async function refundedSale(): Promise<void> {
      const input = saleInput({ options: { refundWindowDays: 120 / 86_400 } });
      await sales.startSale(input);
      await handleOf(input).result();
      truth.add('etims_sales_signed');
      const refund = await sales.refund(NAIROBI, input.traderInvoiceNumber, {
        reason: '01',
        returnDate: '2026-11-22',
        traderInvoiceNumber: invoiceNumber('CN-'),
      });
      expect(refund.creditNote.status).toBe('completed');
      truth.add('etims_credit_notes_signed');
    }

    const oilSale = () => saleInput({ lines: [{ itemId: DEMO.items.cookingOil, quantity: 1, unitPrice: 389.99 }] });
    const ledgerState = () =>
      client.workflow
        .getHandle(stockLedgerWorkflowId(WORKFLOW_TASK_QUEUE, NAIROBI, DEMO.branches.nairobiCbd))
        .query(getStockLedgerStateQuery);
    const ledgerWhen = (done: (s: StockLedgerState) => boolean, what: string) =>
      eventually(
        () => ledgerState().catch(() => undefined),
        (s) => s !== undefined && done(s),
        { timeoutMs: 30_000, intervalMs: 200, what },
      ).then((s) => s!);

    /**
     * Signed, its line handed to the branch's stock ledger, whose movement's answer is lost after the service recorded
     * it while someone else had moved the item: the quantity on hand cannot tell, and the ledger leaves it to an operator.
     */
    async function saleWithMovementForOperator(): Promise<void> {
      // A first oil sale: the ledger learns the quantity on hand (its probe) and records the movement.
      const first = oilSale();
      await sales.startSale(first);
      const [line] = ((await handleOf(first).result()) as SaleState).stockMovements;
      truth.add('etims_sales_signed');
      await ledgerWhen(
        (s) => s.recent.some((m) => m.lines.some((l) => l.lineId === line!.referenceId)),
        'the first oil line recorded',
      );
      // Someone else moves the oil through the service's API (a stock count on the dashboard, another system).
      const counted = await fetch(`${sandbox!.complianceUrl}/v1/stock/adjustments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': SECRETS.COMPLIANCE_API_KEY },
        body: JSON.stringify({
          itemId: DEMO.items.cookingOil,
          action: 'DEDUCT',
          quantity: 2,
          unitPrice: 389.99,
          referenceId: 'STOCK-COUNT-1',
        }),
      });
      expect(counted.status).toBe(201);
      await counted.text();
      // The one stock movement faulted (every other sale is of the gift voucher), answered badly after it was recorded.
      await sandbox!.inspector.addFault({
        service: 'compliance',
        method: 'POST',
        path: '/v1/stock/adjustments',
        kind: 'commit-then-fail',
        status: 503,
        times: 1,
      });
      const input = oilSale();
      await sales.startSale(input);
      const state = (await handleOf(input).result()) as SaleState;
      expect(state.sale?.status).toBe('completed');
      truth.add('etims_sales_signed');
      const waiting = await ledgerWhen(
        (s) =>
          s.open.some(
            (m) =>
              m.status === 'needs_operator' && m.lines.some((l) => l.lineId === state.stockMovements[0]!.referenceId),
          ),
        'a stock movement for an operator',
      );
      expect(waiting.open.find((m) => m.status === 'needs_operator')?.problem).toMatch(/something else moved the item/);
      truth.add('etims_stock_movements_needing_operator');
      truth.leaveWaiting(STOCK_LEDGER_WORKFLOW_TYPE);
    }

    /** Refused by the authority (REJECT-): parked for an operator, who cancels it or leaves it waiting. */
    async function parkedSale(then: 'cancel' | 'leave'): Promise<void> {
      const input = saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) });
      await sales.startSale(input);
      const parked = await waitForState(input, (s) => s.step === 'parked', 'a parked sale');
      expect(parked.parked?.code).toBe('authority_rejected');
      truth.add('etims_sales_parked');
      if (then === 'leave') return truth.leaveWaiting(SALE_WORKFLOW_TYPE);
      await sales.cancel(NAIROBI, input.traderInvoiceNumber, 'customer walked away');
      expect(((await handleOf(input).result()) as SaleState).step).toBe('cancelled');
      truth.add('etims_sales_cancelled');
    }

    /** A start the typed client would refuse, sent as another service might: the sale fails with invalid_input. */
    async function saleWithInvalidInput(): Promise<void> {
      const input = saleInput({ lines: [] });
      const handle = await client.workflow.start(SALE_WORKFLOW_TYPE, {
        taskQueue: WORKFLOW_TASK_QUEUE,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      });
      const failure = await handle.result().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe('invalid_input');
      truth.add('etims_sales_failed');
    }

    /** Runs the business's reconciliation schedule once. */
    async function reconciliation(): Promise<void> {
      // The schedule's own overlap policy (the SDK's default for a trigger is ALLOW_ALL).
      await client.schedule.getHandle(reconciliationScheduleId(NAIROBI)).trigger(ScheduleOverlapPolicy.SKIP);
      await waitForRuns(RECONCILIATION_WORKFLOW_TYPE, 1);
      truth.add('etims_reconciliations');
    }

    /**
     * The sync the schedule runs at start-up delivers every invoice; then the receiver goes down (refuses: a 4xx is
     * final) and a second sync, asked for as other services ask, finds the reviews done since (the demo world's) and
     * cannot deliver them.
     */
    async function purchasesSyncs(): Promise<void> {
      await waitForRuns(PURCHASES_SYNC_WORKFLOW_TYPE, 1);
      truth.add('etims_purchases_syncs');
      truth.add('etims_purchase_events_delivered', receiver!.accepted.size);
      receiver!.refuse();
      const { result } = await syncPurchasesNow(client, NAIROBI, { wait: true, timeoutMs: 30_000 });
      truth.add('etims_purchases_syncs');
      expect(receiver!.refused).toBeGreaterThan(0);
      expect(result?.counts.pending).toBeGreaterThan(0);
      truth.add('etims_purchases_sink_failures');
      pendingAfterLastSync = result!.counts.pending;
    }

    /** Waits until `count` runs of the workflow type have completed, none running. */
    async function waitForRuns(workflowType: string, count: number): Promise<void> {
      const runs = async (status: string) =>
        (await client.workflow.count(`WorkflowType = '${workflowType}' AND ExecutionStatus = '${status}'`)).count;
      const seen = await eventually(
        async () => ({
          completed: await runs('Completed'),
          running: await runs('Running'),
          failed: await runs('Failed'),
        }),
        ({ completed, running, failed }) => (completed >= count && running === 0) || failed > 0,
        { timeoutMs: 30_000, intervalMs: 250, what: `${count} ${workflowType} completed` },
      );
      expect(seen.failed, `${workflowType} runs failed`).toBe(0);
    }

    /**
     * The service says its rate window is spent (a 429, Retry-After 5 s): the worker holds its compliance calls until
     * the reset (the gate holds up to 10 s, answering none itself), X-RateLimit-Remaining reads 0 meanwhile
     * (EtimsComplianceRateWindowSpent), and the sale is signed after. Alone, so no other answer ends the 0 early.
     */
    async function saleHeldBySpentWindow(): Promise<void> {
      await sandbox!.inspector.addFault({
        service: 'compliance',
        method: 'POST',
        path: '/v1/sales',
        kind: 'rate-limit',
        retryAfterSeconds: 5,
        times: 1,
      });
      await signedSale();
      expect(sandbox!.faults.injectedCounts()['rate-limit']).toBe(RATE_LIMITED_SUBMISSIONS + 1);
      truth.add('etims_api_rate_limited');
    }

    async function drive(): Promise<void> {
      const faults = sandbox!.inspector;
      // The stock movement's fault is added by saleWithMovementForOperator, once the ledger knows the item.
      await faults.addFault({
        service: 'compliance',
        method: 'POST',
        path: '/v1/sales',
        kind: 'rate-limit',
        retryAfterSeconds: 0,
        times: RATE_LIMITED_SUBMISSIONS,
      });
      await Promise.all([
        ...Array.from({ length: 4 }, () => signedSale()),
        signedSale(DEMO.invoicePrefixes.flaky),
        refundedSale(),
        saleWithMovementForOperator(),
        parkedSale('leave'),
        ...Array.from({ length: 4 }, () => parkedSale('cancel')),
        ...Array.from({ length: 3 }, () => saleWithInvalidInput()),
        reconciliation(),
        purchasesSyncs(),
      ]);
      // Every fault was applied, and only as often as asked: the 429s are known.
      expect(sandbox!.faults.list()).toEqual([]);
      expect(sandbox!.faults.injectedCounts()).toMatchObject({
        'rate-limit': RATE_LIMITED_SUBMISSIONS,
        'commit-then-fail': 1,
      });
      truth.add('etims_api_rate_limited', RATE_LIMITED_SUBMISSIONS);
    }

    /** Waits for the worker's count of operator work after the events: the parked sale's, and the stock ledger's. */
    async function waitForOperatorWork(): Promise<void> {
      for (const workflowType of [SALE_WORKFLOW_TYPE, STOCK_LEDGER_WORKFLOW_TYPE]) {
        const expected = truth.waitingOf(workflowType);
        await eventually(
          () => prometheus!.query(`sum(etims_operator_work_waiting{job="${JOB}",workflow_type="${workflowType}"})`),
          ({ data }) => data.resultType === 'vector' && Number(data.result[0]?.value[1]) === expected,
          {
            timeoutMs: 30_000,
            intervalMs: 500,
            what: `operator work waiting (${workflowType}) = ${expected} in Prometheus`,
          },
        );
      }
    }

    async function lastScrapeAt(): Promise<number> {
      const { data } = await prometheus!.query(`timestamp(up{job="${JOB}"})`);
      return data.resultType === 'vector' ? Number(data.result[0]?.value[1] ?? 0) : 0;
    }

    // -------------------------------------------------------------------------------------------------------------
    // What Prometheus shows
    // -------------------------------------------------------------------------------------------------------------

    const queries = (): DashboardQuery[] =>
      dashboardQueries({ job: JOB, task_queue: WORKFLOW_TASK_QUEUE, range: RANGE, rate_interval: '1m' });

    async function vector(expression: string): Promise<Sample[]> {
      const { data } = await prometheus!.query(expression, readAt);
      if (data.resultType !== 'vector') throw new Error(`${expression}: a ${data.resultType}, not a vector`);
      return data.result;
    }

    const total = (samples: Sample[]) =>
      samples.length === 0 ? undefined : samples.reduce((sum, s) => sum + Number(s.value[1]), 0);

    it('serves /metrics that promtool check metrics passes', async () => {
      const text = await (await fetch(metricsUrl)).text();
      const result = await promtool(['check', 'metrics'], text);
      const problems = `${result.stdout}${result.stderr}`.trim();
      if (problems) console.log(`promtool check metrics:\n${problems}`);
      expect(problems).toBe('');
      expect(result.code).toBe(0);
    });

    it('puts no secret on /metrics', async () => {
      const text = await (await fetch(metricsUrl)).text();
      for (const [name, value] of Object.entries(SECRETS)) {
        // A payload key ring is `id:key`: the key is the secret.
        const secret = name === 'PAYLOAD_KEYS' ? value.slice(value.indexOf(':') + 1) : value;
        expect(text.includes(secret), `${name} on /metrics`).toBe(false);
      }
    });

    // Only the counters compared: one the worker increments within its first scrape interval (its start-up calls to the
    // compliance service) cannot be seen at zero by any Prometheus; after a restart, the counter reset counts it.
    it('had each counter it compares at zero in its first sample, so increase() saw every first event', async () => {
      const compared = [...new Set([...EVENT_COUNT_PANELS.map((p) => p.metric), ...truth.names()])];
      const { data } = await prometheus!.query(
        `{__name__=~"(${compared.join('|')})_total",job="${JOB}"}[${RANGE}]`,
        readAt,
      );
      if (data.resultType !== 'matrix') throw new Error(`a ${data.resultType}, not a matrix`);
      expect(new Set(data.result.map((series) => series.metric.__name__)).size).toBe(compared.length);
      const notFromZero = data.result
        .filter((series) => Number(series.values[0]?.[1]) !== 0)
        .map((series) => series.metric);
      expect(notFromZero).toEqual([]);
    });

    it('evaluates every dashboard expression without error or warning', async () => {
      const all = queries();
      expect(all.length).toBeGreaterThan(0);
      const answers = await Promise.all(
        all.map(async (q) => ({
          ...q,
          answer: await prometheus!.query(q.expr, readAt).catch((err: Error) => ({ error: err.message })),
        })),
      );
      const rows = answers.map(({ panel, refId, answer }) => {
        if ('error' in answer) return `${panel} [${refId}]: ERROR ${answer.error}`;
        const { data, warnings } = answer;
        const shown = data.resultType === 'vector' ? `${data.result.length} series` : data.resultType;
        return `${panel} [${refId}]: ${shown}${warnings ? `, warnings: ${warnings.join('; ')}` : ''}`;
      });
      console.log(`dashboard expressions at the last scrape:\n  ${rows.join('\n  ')}`);
      expect(
        answers
          .filter(({ answer }) => 'error' in answer || answer.warnings !== undefined)
          .map(({ panel, refId }) => `${panel} [${refId}]`),
      ).toEqual([]);
    });

    it('shows on each count panel the true count of what happened', async () => {
      const all = queries();
      const panelQuery = (panel: string) => {
        const query = all.find((q) => q.panel === panel);
        expect(query, `the dashboard's panel ${panel}`).toBeDefined();
        return query!;
      };
      const rows: Row[] = [];
      for (const { panel, metric } of EVENT_COUNT_PANELS) {
        rows.push({ panel, dashboard: total(await vector(panelQuery(panel).expr)), truth: truth.of(metric) });
      }
      // The level of operator work, one value per workflow type.
      const waiting = await vector(panelQuery(OPERATOR_WORK_PANEL.panel).expr);
      for (const workflowType of OPERATOR_WORKFLOW_TYPES) {
        const sample = waiting.find((s) => s.metric[OPERATOR_WORK_PANEL.by] === workflowType);
        rows.push({
          panel: `${OPERATOR_WORK_PANEL.panel} (${workflowType})`,
          dashboard: sample && Number(sample.value[1]),
          truth: truth.waitingOf(workflowType),
        });
      }
      rows.push(...(await countsOnOtherPanels(all)));
      const width = Math.max(...rows.map((r) => r.panel.length));
      console.log(
        [
          `${'panel'.padEnd(width)}  dashboard  true count`,
          ...rows.map(
            (r) =>
              `${r.panel.padEnd(width)}  ${String(r.dashboard ?? 'no data').padStart(9)}  ${String(r.truth).padStart(10)}`,
          ),
        ].join('\n'),
      );
      const wrong = rows.filter((r) => r.dashboard !== r.truth);
      if (wrong.length > 0)
        console.log(
          `sale runs whose workflow task was retried (a sink call is made again then):\n  ${(await retriedWorkflowTasks()).join('\n  ') || 'none'}`,
        );
      expect(wrong).toEqual([]);
    });

    /**
     * A workflow task whose completion the server refused is run again, not replayed: the metrics sink is called
     * again for it (the SDK's sinks are at-least-once). Listed when a count is off, as its most likely cause.
     */
    async function retriedWorkflowTasks(): Promise<string[]> {
      const found: string[] = [];
      for await (const run of client.workflow.list({ query: `WorkflowType = '${SALE_WORKFLOW_TYPE}'` })) {
        const { events } = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
        const causes = (events ?? []).flatMap((e) =>
          e.workflowTaskFailedEventAttributes ? [String(e.workflowTaskFailedEventAttributes.cause)] : [],
        );
        if (causes.length > 0)
          found.push(`${run.workflowId}: workflow task failed, cause ${causes.join(', ')} (1 = UNHANDLED_COMMAND)`);
      }
      return found;
    }

    /**
     * The counts on bar gauges (by business): read with the dashboard's own expression, found by the counter it
     * counts; and the 429s, whose panel shows a rate, counted over the range from the same series.
     */
    async function countsOnOtherPanels(all: DashboardQuery[]): Promise<Row[]> {
      const rows: Row[] = [];
      for (const [metric, labels] of [
        ['etims_purchases_syncs', { business_id: NAIROBI, outcome: 'succeeded' }],
        ['etims_purchase_events_delivered', { business_id: NAIROBI }],
        ['etims_purchases_sink_failures', { business_id: NAIROBI }],
        ['etims_reconciliations', { business_id: NAIROBI, outcome: 'succeeded' }],
      ] as const) {
        const query = all.find((q) => q.expr.includes(`increase(${metric}_total{`));
        expect(query, `a dashboard panel counting ${metric}`).toBeDefined();
        const sample = (await vector(query!.expr)).find((s) =>
          Object.entries(labels).every(([k, v]) => s.metric[k] === v),
        );
        rows.push({
          panel: `${query!.panel} [${query!.refId}] (${Object.values(labels).join(', ')})`,
          dashboard: sample && Number(sample.value[1]),
          truth: truth.of(metric),
        });
      }
      const pending = all.find((q) => q.expr.includes('etims_purchase_events_pending{'));
      expect(pending, 'a dashboard panel of etims_purchase_events_pending').toBeDefined();
      const waitingEvents = (await vector(pending!.expr)).find((s) => s.metric.business_id === NAIROBI);
      rows.push({
        panel: `${pending!.panel} (${NAIROBI}; true: the last sync's result)`,
        dashboard: waitingEvents && Number(waitingEvents.value[1]),
        truth: pendingAfterLastSync,
      });
      const limited = await vector(
        `round(sum(increase(etims_api_rate_limited_total{job="${JOB}",service="compliance"}[${RANGE}])))`,
      );
      rows.push({
        panel: '429 answers (counted over the range; the panel shows their rate)',
        dashboard: total(limited),
        truth: truth.of('etims_api_rate_limited'),
      });
      return rows;
    }

    it('has exactly the alerts whose cause happened pending or firing', async () => {
      expect(existsSync(RULES), `${RULES} loaded`).toBe(true);
      const active = await eventually(
        () => prometheus!.alerts(),
        (alerts) => ALERTS_CAUSED.every((name) => alerts.some((a) => a.labels.alertname === name)),
        { timeoutMs: 10_000, intervalMs: 500, what: `alerts ${ALERTS_CAUSED.join(', ')}` },
      ).catch(() => prometheus!.alerts());
      console.log(
        `alerts:\n  ${active
          .map(
            (a) =>
              `${a.labels.alertname} ${a.state} ${JSON.stringify(Object.fromEntries(Object.entries(a.labels).filter(([k]) => !['alertname', 'severity'].includes(k))))} value ${a.value}`,
          )
          .join('\n  ')}`,
      );
      expect([...new Set(active.map((a) => a.labels.alertname))].sort()).toEqual([...ALERTS_CAUSED].sort());
      const waiting = active
        .filter((a) => a.labels.alertname === 'EtimsOperatorWorkWaiting')
        .map((a) => a.labels.workflow_type);
      expect(waiting.sort()).toEqual([SALE_WORKFLOW_TYPE, STOCK_LEDGER_WORKFLOW_TYPE].sort());
    });

    it(`pages ${WORKER_GONE_ALERT} once the worker is gone`, async () => {
      await stopWorker();
      mark('worker stopped');
      const alerts = await eventually(
        () => prometheus!.alerts(),
        (all) => all.some((a) => a.labels.alertname === WORKER_GONE_ALERT),
        {
          timeoutMs: 15_000,
          intervalMs: 250,
          what: `${WORKER_GONE_ALERT} pending`,
        },
      );
      mark(`${WORKER_GONE_ALERT} ${alerts.find((a) => a.labels.alertname === WORKER_GONE_ALERT)?.state}`);
      expect(alerts.find((a) => a.labels.alertname === WORKER_GONE_ALERT)?.labels).toMatchObject({
        task_queue: WORKFLOW_TASK_QUEUE,
      });
    });
  },
);
