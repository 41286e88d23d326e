/**
 * `npx tsx tools/bench/purchases-main.ts`: measured figures of the purchases sync on this machine, printed as tables.
 * - Compliance API calls per sync for the demo business (45 invoices listed, 3 more fetched by the pull) and for a
 *   business with 1,000 invoices: the first sync (delivers everything) and the next (what changed: in the demo
 *   world, a late invoice and two reviews), as the sandbox's request log counts them.
 * - How long a till sale waited for the rate budget while a purchases backlog was syncing: BENCH_SYNCS syncs
 *   (default 50) started at once on a budget of 2 activities per second, then BENCH_SALES sales (default 10) one
 *   after another; each sale's wait is read from its history (activity scheduled → started). The same sales on
 *   the idle budget first, for comparison.
 * It starts its own Temporal dev server and the embedded sandbox.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startDevServer } from '../temporal-cli/dev-server.js';
import { createProgram, parseAndRun } from '../../src/cli/command.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import type { PurchasesSyncResult } from '../../src/contracts/purchases-sync.js';
import { fastFixture } from '../../test/helpers/fast-fixture.js';
import { manyPurchases, startPurchasesStack, DEMO, type TemporalAccess } from '../../test/purchases/stack.js';
import { activityWaits } from '../../test/purchases/waits.js';
import { saleInput } from '../../test/workflows/sale-stack.js';

const SYNCS = Number(process.env.BENCH_SYNCS ?? 50);
const SALES = Number(process.env.BENCH_SALES ?? 10);
const BUDGET = 2;

const discard = async () => ({ description: 'discard', deliver: async () => {}, close: async () => {} });
const isPurchases = (route: string) => route.startsWith('/v1/purchases');

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}
const median = (values: number[]) => percentile(values, 50);

async function callsPerSync(temporal: TemporalAccess, bundle: Parameters<typeof startPurchasesStack>[1]) {
  const rows = [];
  for (const [label, fixture] of [
    ['demo business (45 + 3 pulled, then 1 late)', fastFixture()],
    ['1,000 invoices', manyPurchases(1_000)],
  ] as const) {
    const stack = await startPurchasesStack(temporal, bundle, { fixture, sink: discard });
    try {
      const count = () =>
        stack.sandbox.stats.records({ service: 'compliance' }).filter((r) => isPurchases(r.route)).length;
      const first = await stack.firstSync();
      const afterFirst = count();
      const next = await stack.sync();
      const row = (name: string, r: PurchasesSyncResult, logged: number) => ({
        business: label,
        sync: name,
        invoices: r.counts.seen,
        delivered: r.counts.delivered,
        pages: r.counts.pages,
        'API requests (sandbox log)': logged,
        'expected 1 + ceil(n/100)': 1 + Math.ceil(r.counts.seen / 100),
      });
      rows.push(
        row('first (delivers all)', first, afterFirst),
        row('next (delivers what changed)', next, count() - afterFirst),
      );
    } finally {
      await stack.close();
    }
  }
  return rows;
}

async function saleWaits(temporal: TemporalAccess, bundle: Parameters<typeof startPurchasesStack>[1]) {
  // The sandbox's own limit is raised: the budget under test is the compliance queue's, 2 activities per second.
  const fixture = fastFixture((f) => {
    f.applications = (f.applications ?? []).map((a) => ({ ...a, requestsPerMinute: 6_000 }));
  });
  const stack = await startPurchasesStack(temporal, bundle, { fixture, sink: discard, activitiesPerSecond: BUDGET });
  const backlog: WorkflowHandle[] = [];
  try {
    await stack.firstSync();
    const runSales = async () => {
      const signing: number[] = [];
      for (let i = 0; i < SALES; i++) {
        const input = saleInput();
        const handle = await stack.client.workflow.start('saleWorkflow', {
          taskQueue: stack.taskQueue,
          workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
          args: [input],
        });
        await handle.result();
        // One activity checks the items and files the sale: its wait is the whole wait before signing.
        const waits = await activityWaits(handle, ['signSale']);
        signing.push(waits.signSale ?? NaN);
      }
      return { signing };
    };
    // The same sales on an idle budget first: what 2 activities per second costs a sale by itself.
    const idle = await runSales();
    for (let i = 0; i < SYNCS; i++) {
      backlog.push(
        await stack.client.workflow.start('purchasesSyncWorkflow', {
          taskQueue: stack.taskQueue,
          workflowId: `bench-backlog-${i}-${randomUUID().slice(0, 8)}`,
          args: [{ businessId: DEMO.businesses.nairobi }],
        }),
      );
    }
    const { signing: signingWaits } = await runSales();
    const stillQueued = (await Promise.all(backlog.map((h) => h.describe()))).filter(
      (d) => d.status.name === 'RUNNING',
    ).length;
    const purchaseWaits: number[] = [];
    for (const h of backlog.slice(0, 20)) {
      const w = await activityWaits(h, ['pullPurchases', 'listPurchasesPage']);
      purchaseWaits.push(...Object.values(w));
    }
    return {
      rows: [
        {
          measure: 'idle budget: signSale waited (scheduled → started)',
          median: median(idle.signing),
          p90: percentile(idle.signing, 90),
          n: idle.signing.length,
        },
        {
          measure: 'sale: signSale waited for the budget (scheduled → started)',
          median: median(signingWaits),
          p90: percentile(signingWaits, 90),
          n: signingWaits.length,
        },
        {
          measure: 'purchases calls of the backlog (scheduled → started), first 20 syncs',
          median: median(purchaseWaits),
          p90: percentile(purchaseWaits, 90),
          n: purchaseWaits.length,
        },
      ],
      stillQueued,
    };
  } finally {
    await Promise.all(backlog.map((h) => h.terminate('bench over').catch(() => undefined)));
    await stack.close();
  }
}

async function main(): Promise<number> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({
    headless: true,
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
  });
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  try {
    const temporal: TemporalAccess = {
      client: new Client({ connection }),
      nativeConnection,
      namespace: server.namespace,
    };
    const bundle = await bundleWorkflowCode({ ...workflowSources(), logger: new DefaultLogger('ERROR') });
    console.log('\nCompliance API calls per purchases sync (page size 100)');
    console.table(await callsPerSync(temporal, bundle));
    const { rows, stillQueued } = await saleWaits(temporal, bundle);
    console.log(
      `\nTill sale waits (ms) on a budget of ${BUDGET} activities/s while ${SYNCS} purchases syncs were queued; ${SALES} sales one after another (${stillQueued} syncs still running after the last sale)`,
    );
    console.table(rows);
  } finally {
    await nativeConnection.close();
    await connection.close();
    await server.stop();
  }
  return 0;
}

const program = createProgram(
  'npm run bench:purchases --',
  'Measured figures of the purchases sync on this machine: compliance API calls per sync, and how long a till sale waits for the rate budget while a purchases backlog syncs. Starts its own Temporal dev server and the embedded sandbox.',
)
  .addHelpText(
    'after',
    `
Environment:
  BENCH_SYNCS  purchases syncs started at once for the backlog (default 50)
  BENCH_SALES  sales run one after another, idle and behind the backlog (default 10)`,
  )
  .act(main);

parseAndRun(program).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
