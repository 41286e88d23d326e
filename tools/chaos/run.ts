/**
 * One chaos run (docs/chaos.md): a file-backed Temporal dev server, the sandbox in this process with three
 * compliance applications, two worker processes from the current code serving them all from one tenants file (one
 * business of each application taking its supplier invoices in as stock); the faults of the seed's plan from the
 * start for `faultSeconds` (one worker SIGKILLed and restarted every 20 s, the server restarted once, the compliance
 * service and the tax authority each down once, supplier invoices confirmed and taken back, purchases syncs asked);
 * then the checker reads the sandbox until every expectation about the world holds or the settle timeout passes, and
 * judges each application's sales and budget, and the stock that came in.
 */
import { closeDays, daysText, daysVerdict, deliveredDays, signedDays } from './days.js';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { SalesClient } from '../../src/client/sales-client.js';
import { payloadEncryptionFromEnv } from '../../src/codec/data-converter.js';
import { DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET } from '../../sandbox/accounting/default-fixture.js';
import { startSandbox } from '../../sandbox/server.js';
import { freePort } from '../free-port.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import type { StockVerdict } from './checker.js';
import { drive } from './driver.js';
import { balancesOff } from './exactly-once.js';
import { faultPlan, WORKER_KILL_EVERY_MS } from './fault-plan.js';
import { OPERATOR_ACTIONS, OperationHistory } from './history.js';
import type { IncomingVerdict } from './incoming.js';
import { backlogOf, readLedgers, type LedgerBacklog } from './ledgers.js';
import { startOperator } from './operator.js';
import {
  applicationLine,
  exactlyOnceText,
  incomingMovementsText,
  incomingText,
  passed,
  resultLine,
  writeReport,
  type ChaosReport,
} from './report.js';
import { outageExposure, outageLine, outagesRidden, saleKey, type RunOutage } from './outages.js';
import { RequestTape } from './request-tape.js';
import { isoDate, plannedSales, START_SPREAD, type PlannedSale } from './sales.js';
import { deriveSeed, seededRandom } from './seed.js';
import { awaitSettled, readVerdicts, type RunKnowledge } from './settle.js';
import { askSync, awaitArrivals, handInvoices, review, syncUntilStopped } from './stock-in-driver.js';
import { readStockIns, stockInCounts, untold, type StockInCounts } from './stock-ins.js';
import { plannedStockIn } from './supplier-invoices.js';
import { startRestartableServer, type RestartableServer } from './temporal-server.js';
import { tenantKeysEnv, tenantsFileContent, writeTenantsFile } from './tenants-file.js';
import { killAllWorkers, WorkerProcess, type WorkerEvent } from './workers.js';
import { chaosWorld, stockTrackedIn, totalBudgetFor } from './world.js';

export interface ChaosOptions {
  seed: number;
  sales: number;
  faultSeconds: number;
  out: string;
  /** Default 300 s: how long after the faults stop everything must have settled. */
  settleTimeoutSeconds?: number;
  /**
   * The three applications' budgets added up (split 50/25/25 %); default from the plan's pace (totalBudgetFor), about
   * four times what the sales need: real limits each application must keep, not the bottleneck of the run.
   */
  totalRequestsPerMinute?: number;
  /** Keep the worker logs and the server's file even when the run passes. */
  keep?: boolean;
  /** Add the plan's service and authority outages to the faults. */
  outages?: boolean;
  /** Progress lines (terse). */
  log: (line: string) => void;
}

const WORKER_READY_TIMEOUT_MS = 180_000;
const PROGRESS_EVERY_MS = 15_000;
/** How often the sandbox's request log is read into the tape: far less than it takes to scroll 20,000 requests out. */
const TAPE_EVERY_MS = 5_000;
/** The workers' purchases sync interval, the shortest allowed: a review reaches the stock-in within it. */
const PURCHASES_SYNC_INTERVAL = '10s';
/** Beyond the oldest invoice date of a run (FROM_DAYS_BEFORE and the invoice dated before the start). */
const CHAOS_WINDOW_DAYS = 45;
/** After the faults, a sync of each business taking stock in is asked this often until settled. */
const SETTLE_SYNC_EVERY_MS = 10_000;
/** How long the stock-ins may take to take in the invoices that arrived confirmed before the faults start anyway. */
const ARRIVALS_TIMEOUT_MS = 60_000;

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/**
 * Environment of one worker process: only what it needs, never the caller's own secrets. The compliance and
 * accounting tenants come from the tenants file, their keys from the variables it names; none of the single-key
 * variables is set (a tenants worker refuses them), nor SANDBOX.
 */
function workerEnv(
  server: RestartableServer,
  tenants: { file: string; keys: Record<string, string>; stockIn: readonly string[] },
  secrets: { payloadKeys: string; callbackSecret: string },
  ports: { callback: number; publicCallback: number },
  daysFile: string,
): Record<string, string> {
  const inherited = Object.fromEntries(
    ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TEMPORAL_CACHE_DIR'].flatMap((k) =>
      process.env[k] ? [[k, process.env[k]!]] : [],
    ),
  );
  return {
    ...inherited,
    LOG_LEVEL: 'info',
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    PAYLOAD_KEYS: secrets.payloadKeys,
    TENANTS_FILE: tenants.file,
    ...tenants.keys,
    COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
    // Its crashes are SIGKILLs; a SIGTERM only ends the run, once every sale has settled, within its 10 s wait.
    SHUTDOWN_GRACE_TIME: '5s',
    // The run's server knows no other build: its workers make theirs current, as the local stack's do.
    WORKER_MAKE_CURRENT: 'true',
    // One public callback URL and secret for the fleet, as behind a load balancer: every worker mints the same URL
    // for a workflow, so an attempt retried on the other worker sends the same body under its idempotency key (C61).
    CALLBACK_PUBLIC_BASE_URL: `http://127.0.0.1:${ports.publicCallback}`,
    CALLBACK_SECRET: secrets.callbackSecret,
    CALLBACK_HOST: '127.0.0.1',
    CALLBACK_PORT: String(ports.callback),
    // A ledger that saw a contended budget (a server restart, a 429 storm) gathers lines up to this bound: what the
    // checker holds is that each line goes once, not how long it gathers, so the run settles sooner than at 180 s.
    STOCK_MAX_DELAY: '30s',
    // Each worker its own file (a sink is one process's): the days' closes, read back by the checker. Only the
    // businesses taking stock in sync their purchases, as they would without a sink.
    PURCHASES_SINK: `file:${daysFile}`,
    PURCHASES_SYNC_BUSINESSES: tenants.stockIn.join(','),
    PURCHASES_SYNC_INTERVAL,
    // The run's invoices are dated up to 40 days back, and some go from confirmed straight to rejected: with them all in
    // the window every sync lists, a review reaches the stock-in within a sync, as the checker's settle step expects
    // (an older invoice's such change waits for the daily sweep, which a run of minutes never sees through).
    PURCHASES_WINDOW_DAYS: String(CHAOS_WINDOW_DAYS),
  };
}

/**
 * Incoming stock's counts, how many invoices the stock-ins had not caught up with when last read, and by the
 * stock-ins' own count what the run made them do.
 */
function incomingLine(
  incoming: IncomingVerdict,
  untoldInvoices: readonly string[] | null,
  counts: StockInCounts | null,
): string {
  const caughtUp =
    untoldInvoices === null
      ? 'stock-ins not readable'
      : `${untoldInvoices.length} invoice(s) the stock-ins had not caught up with${listed(untoldInvoices)}`;
  const own = counts
    ? `by their own count ${counts.stockIns} stock-ins, ${counts.linesAdded} lines added, ${counts.linesTakenBack} taken back, ` +
      `${counts.confirmedAgain} confirmations after a first, ${counts.linesWaiting} lines waiting`
    : 'stock-ins not readable';
  return `[chaos] ${incomingText(incoming)}; ${incomingMovementsText(incoming)}; ${caughtUp}; ${own}`;
}

/** A few ids, to look up in the report and the logs. */
function listed(ids: readonly string[]): string {
  return ids.length === 0 ? '' : ` (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''})`;
}

/** The exactly-once rule's counts, and what the ledgers still held when the checker last read. */
function stockLine(stock: StockVerdict, ledgers: LedgerBacklog | null): string {
  const backlog = ledgers
    ? `${ledgers.ledgers} ledgers, ${ledgers.pendingLines} lines pending, ${ledgers.openMovements} movements open; ` +
      `by their own count ${ledgers.totals.settledByEvidence} settled by evidence, ${ledgers.totals.resentAfterEvidence} re-sent after evidence, ` +
      `${ledgers.totals.operatorDecisions} operator decisions, ${ledgers.totals.probes} probes`
    : 'ledgers not readable';
  return (
    `[chaos] stock: ${exactlyOnceText(stock)}; ${stock.quantity} units expected, ${stock.missingQuantity} missing, ${stock.extraQuantity} extra, ` +
    `${stock.duplicates.length} referenceIds recorded more than once, ${stock.probes} probes; ${backlog}`
  );
}

export async function runChaos(options: ChaosOptions): Promise<{ report: ChaosReport; exitCode: number }> {
  const { log } = options;
  const settleTimeoutSeconds = options.settleTimeoutSeconds ?? 300;
  const faultMs = options.faultSeconds * 1000;
  const totalRequestsPerMinute =
    options.totalRequestsPerMinute ?? totalBudgetFor(options.sales, faultMs * START_SPREAD);
  const startedAt = new Date();
  const world = chaosWorld({ totalRequestsPerMinute });
  // A storm's 429 cannot tell the applications apart (it answers before the key is read): it announces the highest
  // limit, which lowers no application's budget below its own.
  const planned = faultPlan(options.seed, faultMs, Math.max(...world.applications.map((a) => a.requestsPerMinute)));
  // The seed draws the outages last, so a run without them keeps the rest of its plan.
  const plan = options.outages ? planned : { ...planned, outages: [] };
  const sales = plannedSales({
    seed: options.seed,
    sales: options.sales,
    faultMs,
    catalog: world.catalog,
    date: isoDate(startedAt.getTime()),
  });
  const stockTracked = stockTrackedIn(world.catalog);
  const stockIn = plannedStockIn({
    seed: options.seed,
    sales: options.sales,
    faultMs,
    catalog: world.catalog,
    date: isoDate(startedAt.getTime()),
  });
  const stockInBusinesses = Object.keys(stockIn.from);

  const dir = await mkdtemp(path.join(os.tmpdir(), 'chaos-'));
  const cleanups: Array<() => Promise<unknown>> = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
    cleanups.length = 0;
  };
  let signals = 0;
  const interrupted = (signal: NodeJS.Signals) => {
    // A second Ctrl+C exits at once; the exit handlers still SIGKILL the server and the workers.
    if (signals++ > 0) process.exit(130);
    log(`[chaos] ${signal}: stopping every process`);
    killAllWorkers();
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);

  let t0 = Date.now();
  const clock = () => Date.now() - t0;
  const workerEvents: WorkerEvent[] = [];
  let keepDir = false;
  try {
    const sandbox = await startSandbox({
      fixture: { compliance: world.fixture },
      random: seededRandom(deriveSeed(options.seed, 'sandbox')),
    });
    cleanups.push(() => sandbox.close());
    const windowMs = sandbox.fixture.compliance.rateLimitWindowMs;
    const tape = new RequestTape(sandbox.stats);
    const taping = setInterval(() => tape.read(), TAPE_EVERY_MS);
    cleanups.push(async () => clearInterval(taping));
    const tenants = tenantsFileContent({
      applications: world.applications,
      complianceUrl: sandbox.complianceUrl,
      accountingUrl: sandbox.accountingUrl,
      stockIn: stockIn.from,
    });
    await handInvoices(sandbox.inspector, stockIn);
    const tenantsFile = await writeTenantsFile(dir, tenants);
    const tenantKeys = tenantKeysEnv(world.applications, {
      apiKey: DEMO_ACCOUNTING_API_KEY,
      clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
    });
    const server = await startRestartableServer(dir);
    cleanups.push(() => server.stop());
    log(
      `[chaos] Temporal dev server ${server.address} (file ${path.join(dir, 'chaos.db')}), sandbox ${sandbox.complianceUrl}`,
    );

    const secrets = {
      payloadKeys: `chaos-1:${randomBytes(32).toString('base64')}`,
      callbackSecret: randomBytes(32).toString('base64url'),
    };
    // worker-a stays up and receives the fleet's callbacks; worker-b is the one that crashes.
    const publicCallback = await freePort();
    const workers = await Promise.all(
      ['worker-a', 'worker-b'].map(
        async (name, i) =>
          new WorkerProcess(
            name,
            workerEnv(
              server,
              { file: tenantsFile, keys: tenantKeys, stockIn: stockInBusinesses },
              secrets,
              { callback: i === 0 ? publicCallback : await freePort(), publicCallback },
              path.join(dir, `${name}-events.ndjson`),
            ),
            dir,
            workerEvents,
            clock,
          ),
      ),
    );
    const crashing = workers[1]!;
    cleanups.push(() => Promise.all(workers.map((w) => w.stop())));
    for (const w of workers) w.start();
    await Promise.all(workers.map((w) => w.whenReady(WORKER_READY_TIMEOUT_MS)));
    log(
      `[chaos] workers running (logs in ${dir}), serving ${world.applications.map((a) => `${a.name} (${a.businesses.length} business${a.businesses.length === 1 ? '' : 'es'}, ${a.requestsPerMinute}/min)`).join(', ')}`,
    );

    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const { dataConverter } = payloadEncryptionFromEnv({ PAYLOAD_KEYS: secrets.payloadKeys });
    const client = new Client({ connection, namespace: server.namespace, dataConverter });
    const salesClient = new SalesClient(client);
    const history = new OperationHistory(clock);
    const inspector = sandbox.inspector;
    const arrived = stockIn.invoices.filter((i) => i.arrives === 'confirmed').length;
    const arrivedInMs = await awaitArrivals(client, inspector, history, stockIn, ARRIVALS_TIMEOUT_MS);
    if (arrived > 0)
      log(
        arrivedInMs === null
          ? `[chaos] the stock-ins had not taken in the ${arrived} invoice(s) that arrived confirmed within ${ARRIVALS_TIMEOUT_MS / 1000} s: they meet the faults`
          : `[chaos] the stock-ins took in the ${arrived} invoice(s) that arrived confirmed in ${(arrivedInMs / 1000).toFixed(1)} s`,
      );

    // Faults on: from here every time counts from t0.
    t0 = Date.now();
    const faultsEnd = t0 + faultMs;
    const deadline = faultsEnd + settleTimeoutSeconds * 1000;
    for (const rule of plan.rules) await inspector.addFault(rule);
    // Timed by the sandbox from here, so a busy event loop in this process cannot move their start or end.
    for (const o of plan.outages)
      await inspector.addOutage({
        ...o.outage,
        startInMs: Math.max(0, t0 + o.atMs - Date.now()),
        durationMs: o.durationMs,
      });
    const reviews = stockIn.invoices.reduce((n, invoice) => n + invoice.reviews.length, 0);
    log(
      `[chaos] faults on for ${options.faultSeconds} s: ${options.sales} sales, ${plan.storms.length} 429 storms, worker kills every ${WORKER_KILL_EVERY_MS / 1000} s, server restart at ${(plan.serverRestartAtMs / 1000).toFixed(1)} s, ` +
        `${stockIn.invoices.length} supplier invoices at ${stockInBusinesses.length} businesses taking stock in (${reviews} reviews, ${stockIn.syncs.length} syncs asked), ` +
        plan.outages
          .map(
            (o) =>
              `${o.outage.kind} outage (${o.outage.mode}) ${(o.atMs / 1000).toFixed(1)}–${((o.atMs + o.durationMs) / 1000).toFixed(1)} s`,
          )
          .join(', '),
    );

    const timers: Array<Promise<unknown>> = [];
    const at = (ms: number, what: () => Promise<unknown> | void) =>
      timers.push(sleep(Math.max(0, t0 + ms - Date.now())).then(what));
    for (const storm of plan.storms) {
      at(storm.atMs, () => inspector.addFault(storm.rule));
      at(storm.atMs + storm.durationMs, () => inspector.removeFault(storm.rule.id!).catch(() => undefined));
    }
    for (const ms of plan.workerKillsAtMs) at(ms, () => crashing.killAndRestart());
    for (const invoice of stockIn.invoices)
      for (const next of invoice.reviews) at(next.atMs, () => review(inspector, history, invoice, next));
    // Not waited for: a sync asked while the server restarts must not hold the faults' end.
    for (const sync of stockIn.syncs) at(sync.atMs, () => void askSync(client, history, sync.businessId));
    let serverRestart: ChaosReport['timeline']['serverRestart'] = null;
    at(plan.serverRestartAtMs, async () => {
      const atMs = clock();
      const { downMs } = await server.restart();
      serverRestart = { atMs, downMs };
      log(`[chaos] server restarted at ${(atMs / 1000).toFixed(1)} s, down ${(downMs / 1000).toFixed(1)} s`);
    });

    const planned = new Map<string, PlannedSale>(
      sales.map((s) => [saleWorkflowId(s.input.businessId, s.input.traderInvoiceNumber), s]),
    );
    const driver = drive({ sales, client: salesClient, inspector, history, t0, deadline });
    const operator = startOperator({ client, sales: salesClient, inspector, history, planned });
    cleanups.push(() => operator.stop());
    let latest = '';
    const progress = setInterval(() => {
      log(
        `[chaos] ${(clock() / 1000).toFixed(0)} s: ${history.count('start', 'ok')}/${sales.length} started, ${history.count('refund', 'ok')} refunds answered, ${workerEvents.filter((e) => e.event === 'killed').length} worker kills${latest}`,
      );
    }, PROGRESS_EVERY_MS);
    cleanups.push(async () => clearInterval(progress));

    await sleep(Math.max(0, faultsEnd - Date.now()));
    await Promise.all(timers);
    await inspector.clearFaults();
    const faultsStoppedAtMs = clock();
    const settleSyncs = syncUntilStopped(client, history, stockInBusinesses, SETTLE_SYNC_EVERY_MS);
    cleanups.push(async () => settleSyncs.stop());
    log(
      `[chaos] faults off at ${(faultsStoppedAtMs / 1000).toFixed(1)} s; checking the sandbox until settled (at most ${settleTimeoutSeconds} s)`,
    );

    const firstBranches = new Map(world.catalog.map((b) => [b.businessId, b.branchIds[0]]));
    const known: RunKnowledge = {
      // The workers run this code: every sale hands its stock to its branch's ledger.
      sales: sales.map((s) => ({
        businessId: s.input.businessId,
        ...(s.input.branchId === undefined ? {} : { branchId: s.input.branchId }),
        traderInvoiceNumber: s.input.traderInvoiceNumber,
        lines: s.input.lines,
        refund: s.refund,
        stock: 'ledger' as const,
      })),
      stockTracked,
      firstBranchOf: (businessId) => firstBranches.get(businessId),
      applications: world.applications.map((a) => ({
        applicationId: a.applicationId,
        name: a.name,
        businesses: a.businesses,
        limit: a.requestsPerMinute,
      })),
      windowMs,
      incoming: { invoices: stockIn.invoices, from: stockIn.from },
    };
    const settlement = await awaitSettled(
      () => readVerdicts(inspector, tape, known),
      deadline,
      (v, ledgers, untoldInvoices) => {
        const backlog = ledgers
          ? `, ledgers: ${ledgers.pendingLines} lines pending, ${ledgers.openMovements} movements open (${ledgers.needsOperator} for an operator)`
          : ', ledgers not readable';
        // Until the ledgers settle, lines not yet recorded leave balances off: counted as still to come, not as breaches.
        const { duplicates, withoutReference, missingQuantity, extraQuantity } = v.stock;
        const unexplained = duplicates.reduce((n, d) => n + d.recorded - 1, 0) + withoutReference;
        const right = v.sales.filter((s) => s.problems.length === 0).length;
        const incoming =
          `, incoming: ${v.incoming.recordedQuantity}/${v.incoming.expectedQuantity} units, ` +
          (untoldInvoices === null
            ? 'stock-ins not readable'
            : `${untoldInvoices.length} invoice(s) not caught up${listed(untoldInvoices)}`);
        latest =
          `, ${right} sales right so far, stock: ${missingQuantity} unit(s) still to be recorded, ` +
          `${extraQuantity} recorded beyond the lines, ${unexplained} repeated or unreferenced${backlog}${incoming}`;
      },
      async () => backlogOf((await readLedgers(client)).map((l) => l.state)),
      async () => untold(await readStockIns(client), await inspector.purchases()),
    );
    settleSyncs.stop();
    const settledSeconds =
      settlement.settledAt === null ? null : Math.max(0, (settlement.settledAt - t0 - faultsStoppedAtMs) / 1000);
    clearInterval(progress);
    await operator.stop();
    // Past the deadline nothing is repeated any more; what is still unanswered stays `pending` in the history.
    await Promise.race([driver.done, sleep(1_000)]);

    // Every day closed now (the run does not wait for midnight), each delivered summary against the sandbox's sum.
    const signed = signedDays(await inspector.documents());
    await closeDays(client, WORKFLOW_TASK_QUEUE, signed.values());
    const dayFiles = ['worker-a', 'worker-b'].map((name) => path.join(dir, `${name}-events.ndjson`));
    let days = daysVerdict(signed, await deliveredDays(dayFiles));
    for (let until = Date.now() + 90_000; days.equal < days.days && Date.now() < until;) {
      await sleep(1_000);
      days = daysVerdict(signed, await deliveredDays(dayFiles));
    }
    log(daysText(days));

    const { faultsInjected, ...requests } = await inspector.requests();
    const operatorActions = Object.fromEntries(OPERATOR_ACTIONS.map((k) => [k, history.count(k)]));
    const operatorTotal = OPERATOR_ACTIONS.reduce((n, k) => n + history.count(k), 0);
    const saleDocuments = await inspector.documents({ type: 'sale' });
    const filed = saleDocuments.map((d) => Date.parse(d.sale.createdAt) - t0);
    const exposure = {
      salesFiledDuringFaults: filed.filter((ms) => ms < faultsStoppedAtMs).length,
      salesFiledAfter: filed.filter((ms) => ms >= faultsStoppedAtMs).length,
    };
    log(
      `[chaos] ${exposure.salesFiledDuringFaults} sales filed while faults were on, ${exposure.salesFiledAfter} after; faults injected ${JSON.stringify(faultsInjected)}; operator ${JSON.stringify(operatorActions)} (${operatorTotal} in all)`,
    );
    const { totals, stock } = settlement.verdicts;
    for (const application of settlement.verdicts.applications) log(applicationLine(application));
    const plannedOutages = new Set(plan.outages.map((o) => o.outage.id));
    const runOutages: RunOutage[] = (await inspector.outages())
      .filter((o) => plannedOutages.has(o.id))
      .map((o) => ({
        id: o.id,
        kind: o.kind,
        mode: o.mode,
        startsAtMs: Date.parse(o.startsAt) - t0,
        endsAtMs: (o.endsAt === null ? Date.now() : Date.parse(o.endsAt)) - t0,
        affected: o.affected,
      }));
    const signedAtMs = new Map<string, number>();
    for (const d of saleDocuments) {
      const completed = d.history.find((h) => h.status === 'completed');
      const key = saleKey(d.sale.businessId, d.sale.traderInvoiceNumber);
      // A duplicate document is the checker's to count; the first signing is when the sale was signed.
      if (completed && !signedAtMs.has(key)) signedAtMs.set(key, Date.parse(completed.at) - t0);
    }
    const outages = outageExposure(
      runOutages,
      history.operations
        .filter((op) => op.kind === 'start' && op.traderInvoiceNumber !== null)
        .map((op) => ({
          businessId: op.businessId,
          traderInvoiceNumber: op.traderInvoiceNumber!,
          startedAtMs: op.invokedAtMs,
        })),
      signedAtMs,
    );
    for (const o of outages) log(outageLine(o));
    log(stockLine(stock, settlement.ledgers));
    const counts = await readStockIns(client).then(stockInCounts, () => null);
    log(incomingLine(settlement.verdicts.incoming, settlement.untold, counts));
    for (const b of stock.items.filter((i) => balancesOff(i) > 0).slice(0, 20)) {
      const incoming = b.net ? `; incoming ${b.incoming} (${b.incomingLines} lines), judged by its net` : '';
      log(
        `[chaos]   ${b.businessId} ${b.branchId} ${b.itemId}: sold ${b.sold} (${b.soldLines} lines), deducted ${b.deducted} (${b.deductMovements} movements); restocked ${b.restocked} (${b.restockedLines} lines), added ${b.added} (${b.addMovements} movements)${incoming}`,
      );
    }
    for (const id of settlement.verdicts.incoming.notInSandbox.slice(0, 20))
      log(`[chaos]   supplier invoice ${id} is not in the sandbox`);
    for (const d of stock.duplicates.slice(0, 20))
      log(`[chaos]   ${d.businessId} ${d.referenceId} recorded ${d.recorded} times`);
    const result = resultLine(settlement.verdicts, operatorTotal, settledSeconds, settleTimeoutSeconds, outages);
    const report: ChaosReport = {
      seed: options.seed,
      parameters: {
        sales: options.sales,
        faultSeconds: options.faultSeconds,
        settleTimeoutSeconds,
        totalRequestsPerMinute,
        rateWindowMs: windowMs,
        workers: workers.length,
        workerKillEverySeconds: WORKER_KILL_EVERY_MS / 1000,
      },
      startedAt: startedAt.toISOString(),
      commit: gitCommit(),
      timeline: {
        faultsStartedAt: new Date(t0).toISOString(),
        faultsStoppedAtMs,
        serverRestart,
        storms: plan.storms.map(({ atMs, durationMs }) => ({ atMs, durationMs })),
        outages,
        settledAtMs: settlement.settledAt === null ? null : settlement.settledAt - t0,
        endedAtMs: clock(),
      },
      exposure,
      tenants,
      stockIn: { ...stockIn, counts },
      faultRules: plan.rules,
      faultsInjected,
      requests,
      requestLog: { compliance: tape.records().length, missed: tape.missed() },
      workerEvents,
      workerKills: workerEvents.filter((e) => e.event === 'killed').length,
      operator: { actions: operatorActions, total: operatorTotal, failedRounds: operator.failedRounds() },
      ledgers: settlement.ledgers,
      operations: history.operations,
      verdicts: settlement.verdicts,
      days,
      settled: settledSeconds !== null,
      settledSeconds,
      result,
    };
    await writeReport(options.out, report);
    const ok = passed(totals, settledSeconds) && outagesRidden(outages) && days.equal === days.days;
    keepDir = !ok || options.keep === true;
    if (keepDir) log(`[chaos] worker logs and the server's file kept in ${dir}; per-sale verdicts in ${options.out}`);
    return { report, exitCode: ok ? 0 : 1 };
  } catch (err) {
    keepDir = true;
    log(`[chaos] worker logs kept in ${dir}`);
    throw err;
  } finally {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    await cleanup();
    if (!keepDir) await rm(dir, { recursive: true, force: true });
  }
}
