/**
 * One chaos run (docs/chaos.md): a file-backed Temporal dev server, the sandbox in this process, two worker
 * processes from the current code; the faults of the seed's plan from the start for `faultSeconds` (one worker
 * SIGKILLed and restarted every 20 s, the server restarted once); then the checker reads the sandbox until every
 * expectation holds or the settle timeout passes.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { SalesClient } from '../../src/client/sales-client.js';
import { payloadEncryptionFromEnv } from '../../src/codec/data-converter.js';
import { DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { drive } from './driver.js';
import { faultPlan, WORKER_KILL_EVERY_MS } from './fault-plan.js';
import { OperationHistory } from './history.js';
import { startOperator } from './operator.js';
import { passed, resultLine, writeReport, type ChaosReport } from './report.js';
import { isoDate, plannedSales, type PlannedSale } from './sales.js';
import { deriveSeed, seededRandom } from './seed.js';
import { awaitSettled, readVerdicts } from './settle.js';
import { startRestartableServer, type RestartableServer } from './temporal-server.js';
import { killAllWorkers, WorkerProcess, type WorkerEvent } from './workers.js';
import { chaosWorld, stockTrackedIn } from './world.js';

export interface ChaosOptions {
  seed: number;
  sales: number;
  faultSeconds: number;
  out: string;
  /** Default 300 s: how long after the faults stop everything must have settled. */
  settleTimeoutSeconds?: number;
  /** Default 6000: a correctness run, not a budget run. */
  requestsPerMinute?: number;
  /** Keep the worker logs and the server's file even when the run passes. */
  keep?: boolean;
  /** Progress lines (terse). */
  log: (line: string) => void;
}

const WORKER_READY_TIMEOUT_MS = 180_000;
const PROGRESS_EVERY_MS = 15_000;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** Environment of one worker process: only what it needs, never the caller's own secrets. */
function workerEnv(
  sandbox: Sandbox,
  server: RestartableServer,
  secrets: { payloadKeys: string; callbackSecret: string },
  ports: { callback: number; publicCallback: number },
  requestsPerMinute: number,
): Record<string, string> {
  const inherited = Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TEMPORAL_CACHE_DIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
  return {
    ...inherited,
    LOG_LEVEL: 'info',
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    PAYLOAD_KEYS: secrets.payloadKeys,
    COMPLIANCE_BASE_URL: sandbox.complianceUrl,
    COMPLIANCE_API_KEY: DEMO.keys.orgWide,
    COMPLIANCE_BUSINESS_ID: DEMO.businesses.nairobi,
    COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
    COMPLIANCE_REQUESTS_PER_MINUTE: String(requestsPerMinute),
    ACCOUNTING_BASE_URL: sandbox.accountingUrl,
    ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
    ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
    // One public callback URL and secret for the fleet, as behind a load balancer: every worker mints the same URL
    // for a workflow, so an attempt retried on the other worker sends the same body under its idempotency key (C61).
    CALLBACK_PUBLIC_BASE_URL: `http://127.0.0.1:${ports.publicCallback}`,
    CALLBACK_SECRET: secrets.callbackSecret,
    CALLBACK_HOST: '127.0.0.1',
    CALLBACK_PORT: String(ports.callback),
  };
}

export async function runChaos(options: ChaosOptions): Promise<{ report: ChaosReport; exitCode: number }> {
  const { log } = options;
  const settleTimeoutSeconds = options.settleTimeoutSeconds ?? 300;
  const requestsPerMinute = options.requestsPerMinute ?? 6000;
  const faultMs = options.faultSeconds * 1000;
  const startedAt = new Date();
  const world = chaosWorld({ requestsPerMinute });
  const plan = faultPlan(options.seed, faultMs, requestsPerMinute);
  const sales = plannedSales({ seed: options.seed, sales: options.sales, faultMs, catalog: world.catalog, date: isoDate(startedAt.getTime()) });
  const stockTracked = stockTrackedIn(world.catalog);

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
    const sandbox = await startSandbox({ fixture: { compliance: world.fixture }, random: seededRandom(deriveSeed(options.seed, 'sandbox')) });
    cleanups.push(() => sandbox.close());
    const server = await startRestartableServer(dir);
    cleanups.push(() => server.stop());
    log(`[chaos] Temporal dev server ${server.address} (file ${path.join(dir, 'chaos.db')}), sandbox ${sandbox.complianceUrl}`);

    const secrets = { payloadKeys: `chaos-1:${randomBytes(32).toString('base64')}`, callbackSecret: randomBytes(32).toString('base64url') };
    // worker-a stays up and receives the fleet's callbacks; worker-b is the one that crashes.
    const publicCallback = await freePort();
    const workers = await Promise.all(
      ['worker-a', 'worker-b'].map(
        async (name, i) =>
          new WorkerProcess(name, workerEnv(sandbox, server, secrets, { callback: i === 0 ? publicCallback : await freePort(), publicCallback }, requestsPerMinute), dir, workerEvents, clock),
      ),
    );
    const crashing = workers[1]!;
    cleanups.push(() => Promise.all(workers.map((w) => w.stop())));
    for (const w of workers) w.start();
    await Promise.all(workers.map((w) => w.whenReady(WORKER_READY_TIMEOUT_MS)));
    log(`[chaos] workers running (logs in ${dir})`);

    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const { dataConverter } = payloadEncryptionFromEnv({ PAYLOAD_KEYS: secrets.payloadKeys });
    const client = new Client({ connection, namespace: server.namespace, dataConverter });
    const salesClient = new SalesClient(client);
    const history = new OperationHistory(clock);
    const inspector = sandbox.inspector;

    // Faults on: from here every time counts from t0.
    t0 = Date.now();
    const faultsEnd = t0 + faultMs;
    const deadline = faultsEnd + settleTimeoutSeconds * 1000;
    for (const rule of plan.rules) await inspector.addFault(rule);
    log(`[chaos] faults on for ${options.faultSeconds} s: ${options.sales} sales, ${plan.storms.length} 429 storms, worker kills every ${WORKER_KILL_EVERY_MS / 1000} s, server restart at ${(plan.serverRestartAtMs / 1000).toFixed(1)} s`);

    const timers: Array<Promise<unknown>> = [];
    const at = (ms: number, what: () => Promise<unknown> | void) => timers.push(sleep(Math.max(0, t0 + ms - Date.now())).then(what));
    for (const storm of plan.storms) {
      at(storm.atMs, () => inspector.addFault(storm.rule));
      at(storm.atMs + storm.durationMs, () => inspector.removeFault(storm.rule.id!).catch(() => undefined));
    }
    for (const ms of plan.workerKillsAtMs) at(ms, () => crashing.killAndRestart());
    let serverRestart: ChaosReport['timeline']['serverRestart'] = null;
    at(plan.serverRestartAtMs, async () => {
      const atMs = clock();
      const { downMs } = await server.restart();
      serverRestart = { atMs, downMs };
      log(`[chaos] server restarted at ${(atMs / 1000).toFixed(1)} s, down ${(downMs / 1000).toFixed(1)} s`);
    });

    const planned = new Map<string, PlannedSale>(sales.map((s) => [saleWorkflowId(s.input.businessId, s.input.traderInvoiceNumber), s]));
    const driver = drive({ sales, client: salesClient, inspector, history, t0, deadline });
    const operator = startOperator({ client, sales: salesClient, inspector, history, planned });
    cleanups.push(() => operator.stop());
    let latest = '';
    const progress = setInterval(() => {
      log(`[chaos] ${(clock() / 1000).toFixed(0)} s: ${history.count('start', 'ok')}/${sales.length} started, ${history.count('refund', 'ok')} refunds answered, ${workerEvents.filter((e) => e.event === 'killed').length} worker kills${latest}`);
    }, PROGRESS_EVERY_MS);
    cleanups.push(async () => clearInterval(progress));

    await sleep(Math.max(0, faultsEnd - Date.now()));
    await Promise.all(timers);
    await inspector.clearFaults();
    const faultsStoppedAtMs = clock();
    log(`[chaos] faults off at ${(faultsStoppedAtMs / 1000).toFixed(1)} s; checking the sandbox until settled (at most ${settleTimeoutSeconds} s)`);

    const started = sales.map((s) => ({ businessId: s.input.businessId, traderInvoiceNumber: s.input.traderInvoiceNumber, lines: s.input.lines, refund: s.refund }));
    const settlement = await awaitSettled(() => readVerdicts(inspector, started, stockTracked), deadline, (v) => {
      latest = `, ${v.sales.filter((s) => s.problems.length === 0).length} sales right so far`;
    });
    const settledSeconds = settlement.settledAt === null ? null : Math.max(0, (settlement.settledAt - t0 - faultsStoppedAtMs) / 1000);
    clearInterval(progress);
    await operator.stop();
    // Past the deadline nothing is repeated any more; what is still unanswered stays `pending` in the history.
    await Promise.race([driver.done, sleep(1_000)]);

    const { faultsInjected, ...requests } = await inspector.requests();
    const operatorActions = Object.fromEntries((['confirmStockMovement', 'resendStockMovement', 'retry'] as const).map((k) => [k, history.count(k)]));
    const filed = (await inspector.documents({ type: 'sale' })).map((d) => Date.parse(d.sale.createdAt) - t0);
    const exposure = { salesFiledDuringFaults: filed.filter((ms) => ms < faultsStoppedAtMs).length, salesFiledAfter: filed.filter((ms) => ms >= faultsStoppedAtMs).length };
    log(`[chaos] ${exposure.salesFiledDuringFaults} sales filed while faults were on, ${exposure.salesFiledAfter} after; faults injected ${JSON.stringify(faultsInjected)}; operator ${JSON.stringify(operatorActions)}`);
    const { totals } = settlement.verdicts;
    const result = resultLine(totals, settledSeconds, settleTimeoutSeconds);
    const report: ChaosReport = {
      seed: options.seed,
      parameters: {
        sales: options.sales,
        faultSeconds: options.faultSeconds,
        settleTimeoutSeconds,
        requestsPerMinute,
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
        settledAtMs: settlement.settledAt === null ? null : settlement.settledAt - t0,
        endedAtMs: clock(),
      },
      exposure,
      faultRules: plan.rules,
      faultsInjected,
      requests,
      workerEvents,
      workerKills: workerEvents.filter((e) => e.event === 'killed').length,
      operator: { actions: operatorActions, failedRounds: operator.failedRounds() },
      operations: history.operations,
      verdicts: settlement.verdicts,
      settled: settledSeconds !== null,
      settledSeconds,
      result,
    };
    await writeReport(options.out, report);
    const ok = passed(totals, settledSeconds);
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
