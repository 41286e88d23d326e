/**
 * One bench run: opens the Temporal server, runs the chosen sections one after another (each with its own sandbox and
 * workers, so none loads another's), then builds the report and checks it against the targets.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { measureBudget } from './budget.js';
import { measureCalls } from './calls.js';
import {
  benchFixture,
  openTemporal,
  progress,
  runTag,
  startBenchSandbox,
  startBenchWorkers,
  type BenchTemporal,
} from './env.js';
import { measureFairness } from './fairness.js';
import { measureFiscalDay } from './fiscal-day.js';
import { measureLatency } from './latency.js';
import { measureOpenExecutions } from './open-executions.js';
import { sampleSizes, type BenchOptions } from './options.js';
import { measurePriority } from './priority.js';
import { measureOutage } from './outage.js';
import { measureCatalogue } from './catalogue.js';
import { measureLongevity } from './longevity.js';
import { measureStart } from './start.js';
import { measureStock } from './stock.js';
import { measureStockIn } from './stock-in.js';
import { STOCK_LEDGER_WORKFLOW_TYPE } from '../../src/contracts/stock-ledger.js';
import { measureTenancy } from './tenancy.js';
import { checkTargets, type BenchReport } from './report.js';
import { round } from './stats.js';
import { measureThroughput } from './throughput.js';
import { measureWorkflowCost } from './workflow-cost.js';

function gitCommit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha}+uncommitted` : sha;
  } catch {
    return 'unknown';
  }
}

/** Latency, calls and history share one sandbox and one worker process (with callbacks and the floor worker). */
async function basicSections(
  t: BenchTemporal,
  options: BenchOptions,
  report: Omit<BenchReport, 'targets'>,
  tag: string,
): Promise<void> {
  const sizes = sampleSizes(options.quick);
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: 100_000 }));
  const workers = await startBenchWorkers(t, sandbox, { requestsPerMinute: 100_000, callbacks: true, floor: true });
  try {
    if (options.sections.includes('latency') || options.sections.includes('history')) {
      const started = Date.now();
      const { latency, historyEvents } = await measureLatency(t, workers, {
        sales: sizes.latencySales,
        warmUp: sizes.warmUp,
        tag,
      });
      if (options.sections.includes('latency')) report.latency = latency;
      if (options.sections.includes('history')) {
        report.historyEvents = historyEvents;
        report.history = await measureOpenExecutions(t, workers, { sales: sizes.openSales, tag });
        report.samples.openSales = sizes.openSales;
      }
      report.samples.latencySales = sizes.latencySales;
      report.samples.floorWorkflows = sizes.latencySales;
      report.wallSeconds.latency = round((Date.now() - started) / 1000);
    }
    if (options.sections.includes('calls')) {
      const started = Date.now();
      report.callsPerSale = await measureCalls(t, workers, sandbox, { perPath: sizes.callsPerPath, tag });
      report.samples.callsSalesPerPath = sizes.callsPerPath;
      report.wallSeconds.calls = round((Date.now() - started) / 1000);
    }
  } finally {
    await workers.stop();
    await sandbox.close();
  }
}

/**
 * A section's stock ledgers outlive its sales (a ledger ends after a day without work): ended with the section, so
 * the next one, with a sandbox of its own, starts without ledgers that know another sandbox's quantities.
 */
async function endStockLedgers(t: BenchTemporal): Promise<void> {
  const running = t.client.workflow.list({
    query: `WorkflowType = '${STOCK_LEDGER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
  });
  for await (const ledger of running) {
    await t.client.workflow
      .getHandle(ledger.workflowId, ledger.runId)
      .terminate('the benchmark section is over')
      .catch(() => undefined);
  }
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const began = Date.now();
  const sizes = sampleSizes(options.quick);
  const tag = runTag();
  progress(`${options.quick ? 'quick' : 'full'} run ${tag}: ${options.sections.join(', ')}`);
  const t = await openTemporal();
  const cpus = os.cpus();
  const report: Omit<BenchReport, 'targets'> = {
    server: t.server,
    temporalAddress: t.settings.address ?? '',
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    date: new Date().toISOString(),
    commit: gitCommit(),
    mode: options.quick ? 'quick' : 'full',
    sections: options.sections,
    wallSeconds: { setup: round((Date.now() - began) / 1000) },
    samples: {},
  };
  const timed = async (name: string, run: () => Promise<void>) => {
    const started = Date.now();
    await run();
    await endStockLedgers(t);
    report.wallSeconds[name] = round((Date.now() - started) / 1000);
  };
  try {
    if (options.sections.some((s) => s === 'latency' || s === 'history' || s === 'calls')) {
      await basicSections(t, options, report, tag);
      await endStockLedgers(t);
    }
    if (options.sections.includes('budget')) {
      await timed('budget', async () => {
        report.budget = await measureBudget(t, { windows: sizes.budgetWindows, tag });
        report.samples.budgetSales = report.budget.sales;
      });
    }
    if (options.sections.includes('throughput')) {
      await timed('throughput', async () => {
        report.throughput = await measureThroughput(t, {
          sales: sizes.throughputSales,
          twoProcesses: sizes.throughputTwoProcesses,
          tag,
        });
        report.samples.throughputSales = sizes.throughputSales;
      });
    }
    if (options.sections.includes('workflowCost')) {
      await timed('workflowCost', async () => {
        report.workflowCost = await measureWorkflowCost(t, { replays: sizes.workflowCostReplays, tag });
        report.samples.workflowCostReplays = sizes.workflowCostReplays;
      });
    }
    if (options.sections.includes('fairness')) {
      await timed('fairness', async () => {
        report.fairness = await measureFairness(t, { flood: sizes.flood, sales: sizes.fairnessSales, tag });
        report.samples.fairnessFlood = sizes.flood;
        report.samples.fairnessSales = sizes.fairnessSales;
      });
    }
    if (options.sections.includes('priority')) {
      await timed('priority', async () => {
        report.priority = await measurePriority(t, {
          tills: sizes.tills,
          stockSales: sizes.stockSales,
          registrations: sizes.registrations,
          purchasesSyncs: sizes.purchasesSyncs,
          tag,
        });
        report.samples.tillSales = sizes.tills;
      });
    }
    if (options.sections.includes('tenancy')) {
      await timed('tenancy', async () => {
        report.tenancy = await measureTenancy(t, { ...sizes.tenancy, tag });
        report.samples.tenancyFlood = sizes.tenancy.flood;
        report.samples.tenancyQuietSales = sizes.tenancy.quietSales;
        report.samples.tenancyRollCall = report.tenancy.rollCall.sales;
      });
    }
    if (options.sections.includes('stock')) {
      await timed('stock', async () => {
        report.stock = await measureStock(t, { ...sizes.stock, tag });
        report.samples.stockSales = report.stock.throughput.sales;
        report.samples.stockFaultSales = report.stock.operator.sales;
      });
    }
    if (options.sections.includes('stockIn')) {
      await timed('stockIn', async () => {
        report.stockIn = await measureStockIn(t, { ...sizes.stockIn, tag });
        report.samples.stockInInvoices = sizes.stockIn.invoices;
        report.samples.stockInTillSales = report.stockIn.tillSales.total;
      });
    }
    if (options.sections.includes('outage')) {
      await timed('outage', async () => {
        report.outage = await measureOutage(t, { ...sizes.outage, tag });
        report.samples.outageSalesPerOutage = sizes.outage.sales;
      });
    }
    if (options.sections.includes('catalogue')) {
      await timed('catalogue', async () => {
        report.catalogue = await measureCatalogue(t, { ...sizes.catalogue, tag });
        report.samples.catalogueItems = sizes.catalogue.items;
      });
    }
    if (options.sections.includes('longevity')) {
      await timed('longevity', async () => {
        report.longevity = await measureLongevity(t, { ...sizes.longevity, tag });
        report.samples.longevityInvoices = report.longevity.world.invoices;
        report.samples.longevitySyncs = report.longevity.syncs;
        report.samples.longevityTillSales = report.longevity.till.daySales + report.longevity.till.aloneSales;
      });
    }
    if (options.sections.includes('fiscalDay')) {
      await timed('fiscalDay', async () => {
        report.fiscalDay = await measureFiscalDay(t, { ...sizes.fiscalDay, tag });
        report.samples.fiscalDaySales = report.fiscalDay.sales;
      });
    }
    if (options.sections.includes('start')) {
      await timed('start', async () => {
        report.start = await measureStart(t, sizes.start);
      });
    }
  } finally {
    await t.close();
  }
  report.wallSeconds.total = round((Date.now() - began) / 1000);
  return { ...report, targets: checkTargets(report) };
}
