/**
 * `npm run bench:sales`: measured figures for the sale lifecycle on this machine, printed as a table.
 * - End-to-end time to a signed receipt on the immediate path (median, p90 over N sales), next to the median of
 *   the same API calls (list items + create sale) made directly with the client in the same run.
 * - API calls per sale on each path, counted by the workflow and checked against the sandbox's request log.
 * - History events per completed sale.
 * The sandbox's rate limit is raised so the figures show the worker's overhead, not the 120/min budget.
 * With TEMPORAL_ADDRESS (e.g. the PostgreSQL-backed server of scripts/temporal-postgres.sh), the time to a signed
 * receipt is measured on that server too, in the same run, next to the dev server's.
 */
import { randomUUID } from 'node:crypto';
import { SalesClient } from '../src/client/sales-client.js';
import { ComplianceClient } from '../src/compliance/client.js';
import type { AppConfig } from '../src/config/env.js';
import { loadWorkerConfig } from '../src/config/worker.js';
import { createLogger } from '../src/logger.js';
import { DEMO_ACCOUNTING_API_KEY } from '../src/sandbox/accounting/default-fixture.js';
import { DEMO, defaultComplianceFixtureInput } from '../src/sandbox/default-fixture.js';
import { startSandbox } from '../src/sandbox/server.js';
import { startStack } from '../src/stack.js';
import { eventually } from '../test/helpers/eventually.js';
import { saleWorkflowId, type SaleInput, type SaleState } from '../workflows/definitions.js';

const SALES = Number(process.env.BENCH_SALES ?? 50);
const RATE = Number(process.env.BENCH_RATE ?? 6000);

type History = Awaited<ReturnType<ReturnType<Awaited<ReturnType<typeof startStack>>['client']['workflow']['getHandle']>['fetchHistory']>>;

/** Server time (same machine) at which the createSale activity's result, the signed receipt, was recorded. */
function signedAt(history: History): number {
  const events = history.events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'createSale');
  const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(scheduled?.eventId ?? '-'));
  if (!completed?.eventTime) throw new Error('no completed createSale in the history');
  return eventTime(completed);
}

function eventTime(event: NonNullable<History['events']>[number] | undefined): number {
  if (!event?.eventTime) throw new Error('history event without a time');
  return Number(event.eventTime.seconds) * 1000 + (event.eventTime.nanos ?? 0) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const ms = (v: number) => Number(v.toFixed(1));

async function main(): Promise<void> {
  const fixture = structuredClone(defaultComplianceFixtureInput);
  fixture.applications = (fixture.applications ?? []).map((a) => ({ ...a, requestsPerMinute: RATE }));
  fixture.authority = { ...fixture.authority, asyncDelayMs: 300 };
  fixture.callbacks = { retryScheduleMs: [0, 200, 500], timeoutMs: 1_000 };
  const sandbox = await startSandbox({ fixture: { compliance: fixture } });
  const config: AppConfig = {
    compliance: { baseUrl: sandbox.complianceUrl, apiKey: DEMO.keys.orgWide, businessId: DEMO.businesses.nairobi, timeoutMs: 30_000, allowLoopbackCallbacks: true },
    accounting: {
      baseUrl: sandbox.accountingUrl,
      apiKey: DEMO_ACCOUNTING_API_KEY,
      clientSecret: undefined,
      clientId: undefined,
      webhookSecret: undefined,
      signRequests: false,
      signQuery: false,
      timeoutMs: 30_000,
    },
    logLevel: 'error',
  };
  const logger = createLogger({ level: 'error', name: 'bench' });
  const direct = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: DEMO.keys.orgWide, businessId: DEMO.businesses.nairobi });
  const run = randomUUID().slice(0, 8).toUpperCase();
  const lines = [
    { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
    { itemId: DEMO.items.milk, quantity: 1, unitPrice: 65 },
  ];
  const input = (tin: string, extra: Partial<SaleInput> = {}): SaleInput => ({
    businessId: DEMO.businesses.nairobi,
    traderInvoiceNumber: tin,
    saleDate: '2026-11-21',
    lines,
    options: { refundWindowDays: 0 },
    ...extra,
  });
  const requestsSoFar = () => sandbox.stats.snapshot().total;
  const external = process.env.TEMPORAL_ADDRESS;
  const servers = [
    { name: 'dev server (started here)', env: {} },
    ...(external ? [{ name: `${external} (TEMPORAL_ADDRESS)`, env: { TEMPORAL_ADDRESS: external, TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE } }] : []),
  ];
  const latencyRows = [];
  let pathRows: Array<Record<string, string | number>> = [];
  try {
    for (const [index, server] of servers.entries()) {
      const workerConfig = { ...loadWorkerConfig(server.env), complianceRequestsPerMinute: RATE };
      const stack = await startStack({ config, workerConfig, logger, headless: true, dbFilename: null });
      try {
        const sales = new SalesClient(stack.client);
        const waitFor = (i: SaleInput, done: (s: SaleState) => boolean) =>
          eventually(() => sales.getState(i.businessId, i.traderInvoiceNumber), done, { timeoutMs: 120_000, intervalMs: 5, what: `sale ${i.traderInvoiceNumber}` });
        // Warm-up: the first sale pays for bundling caches and connection set-up.
        const warm = input(`BENCH-WARM-${run}-${index}`);
        await sales.startSale(warm);
        await waitFor(warm, (s) => s.step === 'completed');

        const workflowTimes: number[] = [];
        const insideTimes: number[] = [];
        const directTimes: number[] = [];
        for (let i = 0; i < SALES; i++) {
          const sale = input(`BENCH-${run}-${index}-${i}`);
          const t0 = Date.now();
          await sales.startSale(sale);
          const handle = stack.client.workflow.getHandle(saleWorkflowId(sale.businessId, sale.traderInvoiceNumber));
          // Waiting on the result (not polling the query, which would load the worker) lets the stock report finish
          // before the next sale; the signing moment is read from the history afterwards.
          await handle.result();
          const history = await handle.fetchHistory();
          workflowTimes.push(signedAt(history) - t0);
          insideTimes.push(signedAt(history) - eventTime(history.events?.[0]));

          const t1 = performance.now();
          await direct.listItems();
          await direct.createSale({ traderInvoiceNumber: `BENCH-DIRECT-${run}-${index}-${i}`, saleDate: '2026-11-21', lines }, `bench-direct-${run}-${index}-${i}`);
          directTimes.push(performance.now() - t1);
        }
        latencyRows.push(
          { server: server.name, measure: 'sale workflow (start → signed, via Temporal)', median: ms(median(workflowTimes)), p90: ms(percentile(workflowTimes, 90)), min: ms(Math.min(...workflowTimes)) },
          { server: server.name, measure: '  of which inside the workflow (first history event → signed)', median: ms(median(insideTimes)), p90: ms(percentile(insideTimes, 90)), min: ms(Math.min(...insideTimes)) },
          { server: server.name, measure: 'same API calls made directly (list items + create sale)', median: ms(median(directTimes)), p90: ms(percentile(directTimes, 90)), min: ms(Math.min(...directTimes)) },
        );
        if (index === 0) pathRows = await measurePaths(sales, stack, waitFor);
      } finally {
        await stack.stop();
      }
    }
    console.log(`\nEnd-to-end time to a signed receipt, immediate path, ${SALES} sales one after another (ms)`);
    console.table(latencyRows);
    console.log('\nPer path, dev server (API requests from the sandbox log include retries and polls; history events of the closed execution)');
    console.table(pathRows);
  } finally {
    await direct.close();
    await sandbox.close();
  }

  /** One sale per path, one at a time, so the sandbox's request count can be attributed to it. */
  async function measurePaths(
    sales: SalesClient,
    stack: Awaited<ReturnType<typeof startStack>>,
    waitFor: (i: SaleInput, done: (s: SaleState) => boolean) => Promise<SaleState>,
  ): Promise<Array<Record<string, string | number>>> {
    const paths: Array<{ path: string; sale: SaleInput; drive?: (s: SaleState) => Promise<void> }> = [
      { path: 'immediate', sale: input(`PATH-IMM-${run}`) },
      { path: 'async (callback/poll)', sale: input(`ASYNC-PATH-${run}`) },
      { path: 'unregistered item', sale: input(`PATH-ITEM-${run}`, { lines: [{ itemId: DEMO.items.bathSoap, quantity: 1, unitPrice: 120 }, ...lines] }) },
      { path: 'rejection then retry', sale: input(`FLAKY-PATH-${run}`) },
      {
        path: 'refund to credit note',
        sale: input(`PATH-REFUND-${run}`, { options: { refundWindowDays: 30 } }),
        drive: async (s) => {
          await sales.refund(s.businessId, s.traderInvoiceNumber, { reason: '06', returnDate: '2026-11-22', traderInvoiceNumber: `CN-${run}` });
        },
      },
    ];
    const rows = [];
    for (const p of paths) {
      const before = requestsSoFar();
      await sales.startSale(p.sale);
      const signed = await waitFor(p.sale, (s) => s.step === 'refund_window' || s.step === 'completed');
      await p.drive?.(signed);
      const final = await waitFor(p.sale, (s) => s.step === 'completed');
      const history = await stack.client.workflow.getHandle(saleWorkflowId(p.sale.businessId, p.sale.traderInvoiceNumber)).fetchHistory();
      rows.push({
        path: p.path,
        'API calls (workflow count)': final.apiCalls,
        'API requests (sandbox log)': requestsSoFar() - before,
        'history events': history.events?.length ?? 0,
        submissions: final.submissions,
      });
    }
    return rows;
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
