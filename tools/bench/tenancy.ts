/**
 * Many merchants on one worker process: a generated sandbox of hundreds of applications (each its own key,
 * its own budget, a few businesses) and the tenants file naming them, served by ONE worker process. In one run:
 * a quiet merchant's sales timed alone, then while another merchant floods its own budget (and, in the full run, more
 * merchants build backlogs); one sale for every other application (or business) at once, and meanwhile a newcomer
 * added to the tenants file and its first sale timed. Every request figure comes from the sandbox's log, per application, never
 * from the worker. See tenancy-math.ts and docs/benchmarks.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/server.js';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import type { BenchTemporal } from './env.js';
import { progress, startBenchSandbox } from './env.js';
import { medianProfile, segments, signedRecorded, waitsBefore } from './history.js';
import type { TenancySizes } from './options.js';
import type { TenancyBacklog, TenancyProfile, TenancyReport } from './report.js';
import { mapLimit, median, medianByKey, round, summarise } from './stats.js';
import {
  backlogUse,
  busiestApplication,
  isolationRatio,
  rateLimitedShare,
  type ApplicationRequests,
  type RoutedRequest,
} from './tenancy-math.js';
import { startTenancyWorker, type TenancyWorker } from './tenancy-worker.js';
import {
  tenancySale,
  tenancyWorld,
  tenantsFileContent,
  type TenancyMerchant,
  type TenancyWorld,
} from './tenancy-world.js';

/** The real minute: with tenants, the worker paces to the lower of the file's budget and the service's `X-RateLimit-Limit`, read as per minute. */
const WINDOW_MS = 60_000;
/** The longest wait for the flood's first workflow tasks to have run before the quiet merchant is timed beside it. */
const FLOOD_SETTLE_LIMIT_MS = 60_000;
const SETTLE_POLL_MS = 250;
/** Started, task scheduled, task started: a history this long has not finished its first workflow task. */
const FIRST_TASK_EVENTS = 3;
/** The quiet merchant idle this long before each timed batch, so its own budget is in the same state for both. */
const QUIET_GAP_MS = 3_000;
/** How long the newcomer's first sale is waited for once the file names it (above the target, so a miss is measured). */
const ONBOARD_WAIT_MS = 75_000;
const PROBE_GAP_MS = 500;
/** A phase not done in this time fails the section (a worker that stopped serving must not hang the bench). */
const BATCH_DEADLINE_MS = 120_000;
const ROLL_CALL_DEADLINE_MS = 600_000;

/** `work`, or an error naming `what` once `ms` have passed without it. */
async function withDeadline<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`tenancy: ${what} not done after ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface Timed {
  ms: number[];
  /** Median queue wait (scheduled → started) of each activity up to the receipt, and median of each step. */
  profile: TenancyProfile;
}

/** Starts `sales` at once; each one's time from its start to its recorded receipt, and where it went (histories). */
async function timeToSigned(
  t: BenchTemporal,
  w: TenancyWorker,
  sales: readonly SaleInput[],
  started: string[],
): Promise<Timed> {
  const batch = mapLimit(sales, sales.length, async (sale) => {
    const t0 = Date.now();
    const { workflowId } = await w.sales.startSale(sale);
    started.push(workflowId);
    await t.client.workflow.getHandle(workflowId).result();
    const events = await t.events(workflowId);
    const recorded = signedRecorded(events);
    if (!recorded) throw new Error(`tenancy: sale ${sale.traderInvoiceNumber} closed without a recorded receipt`);
    return { ms: recorded.at - t0, waits: waitsBefore(events, recorded), steps: segments(events, t0, recorded) };
  });
  const runs = await withDeadline(
    `${sales.length} sales of ${sales[0]?.businessId ?? '?'} signed`,
    BATCH_DEADLINE_MS,
    batch,
  );
  const steps = medianProfile(
    runs.map((r) => r.steps),
    median,
  ).steps.map((step) => ({ ...step, ms: round(step.ms) }));
  return { ms: runs.map((r) => r.ms), profile: { waitsMs: medianByKey(runs.map((r) => r.waits)), steps } };
}

/**
 * Waits until the flood is in its merchant's budget: every one of its sales past its first workflow task (the history
 * longer than the task's three events, or closed). The workflow queue's backlog empties sooner: a worker holds the
 * tasks it polled until its workflow thread runs them, and those were what the quiet merchant's sales met. Answers
 * the seconds it took (the wait ends after `limitMs`).
 */
async function floodSettled(t: BenchTemporal, ids: readonly string[], limitMs: number): Promise<number> {
  const started = Date.now();
  // Oldest first: the first tasks run in about the order the sales were started, so each read mostly advances.
  for (let i = 0; i < ids.length && Date.now() - started < limitMs;) {
    const described = await t.client.workflow.getHandle(ids[i]!).describe();
    if (described.historyLength > FIRST_TASK_EVENTS || described.closeTime !== undefined) i += 1;
    else await sleep(SETTLE_POLL_MS);
  }
  return round((Date.now() - started) / 1000);
}

/** Requests of `requests` in each `bucketMs` from `from` to `to`: how a budget was spent over time. */
function perBucket(requests: readonly RoutedRequest[], from: number, to: number, bucketMs: number): number[] {
  const counts = Array.from({ length: Math.ceil((to - from) / bucketMs) }, () => 0);
  for (const r of requests) if (r.at >= from && r.at < to) counts[Math.floor((r.at - from) / bucketMs)]! += 1;
  return counts;
}

/** A merchant's backlog: `count` sales over its businesses in turn, started 50 at a time. */
async function startBacklog(
  w: TenancyWorker,
  m: TenancyMerchant,
  count: number,
  tag: string,
): Promise<{ merchant: TenancyMerchant; from: number; ids: string[] }> {
  const from = Date.now();
  const ids = await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    50,
    async (i) =>
      (await w.sales.startSale(tenancySale(m.businesses[i % m.businesses.length]!, `BT-${m.application}-${tag}-${i}`)))
        .workflowId,
  );
  return { merchant: m, from, ids };
}

/** One sale per application (its first business) or per business, all at once, each awaited to its receipt. */
async function rollCall(
  w: TenancyWorker,
  merchants: readonly TenancyMerchant[],
  scope: TenancySizes['rollCall'],
  tag: string,
  startedIds: string[],
): Promise<TenancyReport['rollCall']> {
  const businesses = merchants.flatMap((m) => (scope === 'applications' ? [m.businesses[0]!] : m.businesses));
  const started = Date.now();
  const calls = mapLimit(businesses, 50, async (businessId, i) => {
    const t0 = Date.now();
    const sale = tenancySale(businessId, `BR-${tag}-${i}`);
    startedIds.push(saleWorkflowId(sale.businessId, sale.traderInvoiceNumber));
    const answer = await w.sales.startAndAwaitReceipt(sale, { wait: '60 seconds' });
    return { signed: answer.signed, ms: Date.now() - t0 };
  });
  const answers = await withDeadline(`the roll call's ${businesses.length} sales`, ROLL_CALL_DEADLINE_MS, calls);
  const ms = summarise(answers.map((a) => a.ms));
  return {
    scope,
    sales: businesses.length,
    signed: answers.filter((a) => a.signed).length,
    seconds: round((Date.now() - started) / 1000),
    p50Ms: ms.p50,
    p90Ms: ms.p90,
  };
}

/**
 * The tenants file rewritten with the newcomer, then its sales tried one after another (as a merchant whose till
 * says "not served yet" would) until one is signed. A sale the worker does not serve yet is parked at once; it is
 * ended before the next try.
 */
async function onboard(
  t: BenchTemporal,
  w: TenancyWorker,
  rewrite: () => void,
  newcomer: TenancyMerchant,
  tag: string,
  started: string[],
): Promise<{ seconds: number; report: TenancyReport['onboard'] }> {
  rewrite();
  const changed = Date.now();
  let probes = 0;
  let lastProblem: string | undefined;
  while (Date.now() - changed < ONBOARD_WAIT_MS) {
    const sale = tenancySale(newcomer.businesses[0]!, `BN-${tag}-${probes++}`);
    started.push(saleWorkflowId(sale.businessId, sale.traderInvoiceNumber));
    try {
      const answer = await withDeadline(
        'an onboarding sale answered',
        ONBOARD_WAIT_MS,
        w.sales.startAndAwaitReceipt(sale, { wait: '10 seconds' }),
      );
      if (answer.signed)
        return {
          seconds: (Date.now() - changed) / 1000,
          report: { application: newcomer.application, probes, signed: true },
        };
      lastProblem = answer.state.parked ? `parked: ${answer.state.parked.code}` : `step ${answer.state.step}`;
      await t.client.workflow
        .getHandle(answer.workflowId)
        .terminate('bench: onboarding probe not served')
        .catch(() => undefined);
    } catch (err) {
      lastProblem = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    }
    await sleep(PROBE_GAP_MS);
  }
  return {
    seconds: Number.NaN,
    report: { application: newcomer.application, probes, signed: false, ...(lastProblem ? { lastProblem } : {}) },
  };
}

/** The sandbox's compliance log per application, checked to be whole (its ring keeps the latest 20,000 requests). */
function requestsByApplication(sandbox: Sandbox, world: TenancyWorld): ApplicationRequests[] {
  const all = sandbox.stats.records();
  if (all.length < sandbox.stats.snapshot().total)
    throw new Error(
      `tenancy: the sandbox's request log dropped ${sandbox.stats.snapshot().total - all.length} requests; the run is too large for it`,
    );
  const byApplication = new Map<string, RoutedRequest[]>();
  for (const r of all) {
    if (r.service !== 'compliance' || r.applicationId === undefined) continue;
    const requests = byApplication.get(r.applicationId) ?? [];
    requests.push({ at: r.at, status: r.status, route: `${r.method} ${r.route}` });
    byApplication.set(r.applicationId, requests);
  }
  return [...world.merchants, world.newcomer].map((m) => ({
    application: m.application,
    limitPerWindow: m.requestsPerWindow,
    requests: byApplication.get(m.applicationId) ?? [],
  }));
}

/** Applications with a sale the sandbox accepted (POST /v1/sales answered 2xx). */
function applicationsSigned(sandbox: Sandbox): number {
  const signed = sandbox.stats
    .records({ service: 'compliance' })
    .filter((r) => r.method === 'POST' && r.route === '/v1/sales' && r.status >= 200 && r.status < 300);
  return new Set(signed.map((r) => r.applicationId)).size;
}

export async function measureTenancy(
  t: BenchTemporal,
  options: TenancySizes & { tag: string },
): Promise<TenancyReport> {
  const requestsPerWindow = Math.round((options.requestsPerMinute * WINDOW_MS) / 60_000);
  const world = tenancyWorld({
    applications: options.applications,
    businesses: options.businesses,
    requestsPerWindow,
    windowMs: WINDOW_MS,
  });
  const [quiet, flooder, ...rest] = world.merchants;
  if (!quiet || !flooder || rest.length < options.extraBacklogs)
    throw new RangeError('tenancy: too few applications for the run');
  const extras = rest.slice(0, options.extraBacklogs);
  const idle = rest.slice(options.extraBacklogs);
  const dir = mkdtempSync(join(tmpdir(), 'bench-tenancy-'));
  const tenantsFile = join(dir, 'tenants.json');
  const backlogs: Array<{ merchant: TenancyMerchant; from: number; ids: string[] }> = [];
  /** The quiet merchant's, the roll call's and the newcomer's sales: ended too if the run fails before they close. */
  const sales: string[] = [];
  /** Sales not yet ended: a failed run still ends them, so no later run's workers meet them. */
  let unended = () => [...backlogs.flatMap((b) => b.ids), ...sales];
  let sandbox: Sandbox | undefined;
  let worker: TenancyWorker | undefined;
  try {
    sandbox = await startBenchSandbox(world.fixture);
    const url = sandbox.complianceUrl;
    const write = (merchants: readonly TenancyMerchant[]) =>
      writeFileSync(tenantsFile, `${JSON.stringify(tenantsFileContent(merchants, url, world.windowMs))}\n`, {
        mode: 0o600,
      });
    write(world.merchants);
    progress(
      `tenancy: one worker process on a tenants file of ${world.merchants.length} applications, ${options.businesses} businesses (${options.requestsPerMinute}/min each)`,
    );
    worker = await startTenancyWorker(t, { tenantsFile, reloadMs: options.reloadMs });
    const w = worker;
    const quietSales = (label: string) =>
      Array.from({ length: options.quietSales }, (_, i) =>
        tenancySale(quiet.businesses[0]!, `BQ-${label}-${options.tag}-${i}`),
      );

    // The newcomer is onboarded while the others sell, as a vendor would add a merchant: not on an idle worker.
    const rollCallAndOnboarding = () => {
      progress(
        `tenancy: roll call, one sale per ${options.rollCall === 'applications' ? 'application' : 'business'} of ${idle.length} applications; meanwhile ${world.newcomer.application} added to the tenants file`,
      );
      return Promise.all([
        rollCall(w, idle, options.rollCall, options.tag, sales),
        onboard(t, w, () => write([...world.merchants, world.newcomer]), world.newcomer, options.tag, sales),
      ]);
    };
    // The full run's roll call (a sale per business) would take more CPU than 2 cores have beside its backlogs: first.
    const early = options.rollCallFirst ? await rollCallAndOnboarding() : undefined;

    progress(
      `tenancy: ${quiet.application}'s ${options.quietSales} sales alone, then while ${flooder.application} floods ${options.flood} into its own budget`,
    );
    // A whole batch first: the worker's first sales of a merchant (its item list, code paths not yet run) are not the alone figure.
    await timeToSigned(t, w, quietSales('W'), sales);
    await sleep(QUIET_GAP_MS);
    const alone = await timeToSigned(t, w, quietSales('A'), sales);
    const flood = await startBacklog(w, flooder, options.flood, options.tag);
    backlogs.push(flood);
    // Beside the flood's 300 starts (the CPU of their first workflow tasks), then beside the flood in its budget.
    const atStart = await timeToSigned(t, w, quietSales('S'), sales);
    const settleSeconds = await floodSettled(t, flood.ids, FLOOD_SETTLE_LIMIT_MS);
    await sleep(QUIET_GAP_MS);
    const flooded = await timeToSigned(t, w, quietSales('F'), sales);
    const signWait = (p: Timed) => Object.values(p.profile.waitsMs).join('/');
    progress(
      `tenancy: ${quiet.application} p50 ${round(median(alone.ms))} ms alone, ${round(median(atStart.ms))} ms at the flood's start, ${round(median(flooded.ms))} ms beside it ${settleSeconds} s later (its activities' median queue wait ${signWait(alone)}, ${signWait(atStart)}, ${signWait(flooded)} ms)`,
    );

    if (extras.length > 0) progress(`tenancy: ${extras.length} more backlogs of ${options.flood} sales`);
    for (const m of extras) backlogs.push(await startBacklog(w, m, options.flood, options.tag));
    const [called, onboarded] = early ?? (await rollCallAndOnboarding());

    // The flood is kept `backlogMs` from its first request, so whole windows of it are measured.
    const floodBegan =
      sandbox.stats.records({
        since: flood.from,
        service: 'compliance',
        applicationId: flood.merchant.applicationId,
      })[0]?.at ?? flood.from;
    const until = floodBegan + options.backlogMs;
    if (Date.now() < until)
      progress(
        `tenancy: backlogs kept ${round((until - Date.now()) / 1000)} s more (${options.backlogMs / 1000} s from the flood's first request)`,
      );
    await sleep(Math.max(0, until - Date.now()));
    const ended = Date.now();
    const stillRunning = await Promise.all(
      backlogs.map((b) =>
        mapLimit(b.ids, 20, (id) =>
          t.client.workflow
            .getHandle(id)
            .terminate('bench: tenancy measured')
            .then(
              () => true,
              () => false,
            ),
        ),
      ),
    );
    unended = () => [];
    const queues = await w.queues();
    await w.stop();
    worker = undefined;

    const logged = requestsByApplication(sandbox, world);
    const requestsOf = (m: TenancyMerchant) => logged.find((a) => a.application === m.application)!.requests;
    const used: TenancyBacklog[] = backlogs.map((b, i) => {
      const requests = requestsOf(b.merchant);
      // A backlog that drained before the end is measured to its last request: idle time after it is not a backlog.
      const drained = !stillRunning[i]!.includes(true);
      const to = drained ? Math.max(b.from, ...requests.map((r) => r.at)) : ended;
      // From its first request, as the budget section counts from its first window: the time the worker took to start
      // the backlog's sales (their first workflow tasks, on a busy machine) is reported, not counted as pacing.
      const from = Math.min(to, ...requests.filter((r) => r.at >= b.from).map((r) => r.at));
      const use = backlogUse(requests, {
        from,
        to,
        limitPerWindow: b.merchant.requestsPerWindow,
        windowMs: world.windowMs,
      });
      return {
        application: b.merchant.application,
        sales: b.ids.length,
        firstRequestAfterSeconds: round((from - b.from) / 1000),
        ...use,
        utilisation: round(use.utilisation, 4),
      };
    });
    const busiest = busiestApplication(logged, world.windowMs);
    const busiestBacklog = backlogs.find((b) => b.merchant.application === busiest.application);
    const share = rateLimitedShare(logged);
    return {
      applications: w.served.applications,
      businesses: w.served.businesses,
      applicationsSigned: applicationsSigned(sandbox),
      requestsPerMinute: options.requestsPerMinute,
      windowMs: world.windowMs,
      isolationRatio: round(isolationRatio(alone.ms, flooded.ms), 4),
      quiet: {
        application: quiet.application,
        sales: options.quietSales,
        aloneP50Ms: round(median(alone.ms)),
        floodedP50Ms: round(median(flooded.ms)),
        atFloodStartP50Ms: round(median(atStart.ms)),
        alone: alone.profile,
        flooded: flooded.profile,
        atFloodStart: atStart.profile,
      },
      flood: { application: flooder.application, sales: options.flood, settleSeconds },
      maxRequestsPerMinute: round(busiest.ratio, 4),
      busiest: {
        application: busiest.application,
        sent: busiest.sent,
        limitPerWindow: busiest.limitPerWindow,
        routes: busiest.routes,
        ...(busiestBacklog
          ? { per5sFromBacklogStart: perBucket(requestsOf(busiestBacklog.merchant), busiestBacklog.from, ended, 5_000) }
          : {}),
      },
      limiterWindowRatio: round(busiest.limiterWindowRatio, 4),
      utilisation: Math.min(...used.map((b) => b.utilisation)),
      backlogs: used,
      rateLimitedShare: share.share,
      requests: share.requests,
      rateLimited: share.rateLimited,
      onboardSeconds: round(onboarded.seconds),
      taskQueues: queues.polled,
      refusedQueues: queues.refused.length,
      windowsWithOwnQueue: world.merchants.filter((m) => m.businesses.length > 1).length,
      onboard: onboarded.report,
      rollCall: called,
      reloadMs: options.reloadMs,
    };
  } finally {
    await worker?.stop();
    await mapLimit(unended(), 20, (id) =>
      t.client.workflow
        .getHandle(id)
        .terminate('bench: tenancy over')
        .catch(() => undefined),
    );
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
