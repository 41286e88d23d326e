/**
 * The fiscalDay section: sales of the Nairobi business on its two control units across midnight, the sandbox's clock
 * moved so that its midnight comes within the run (the worker told by FISCAL_DAY_CLOCK_AHEAD), with refunds,
 * rejections then retries (FLAKY-), an authority outage over midnight, the worker (what `npm run worker` runs) killed
 * twice and the callbacks sent while it was down lost. The first day closes by its timer after the grace; the second
 * by an operator. Each day's book is checked against an independent sum of the documents the sandbox signed, and a
 * till's close with three planted differences is matched. Then a busy day of 10,000 entries (the payload bound) and
 * tills on a worker with day books against one without (FISCAL_DAY_BOOKS=off), same run.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FiscalDaysClient } from '../../src/client/fiscal-days.js';
import { SalesClient } from '../../src/client/sales-client.js';
import {
  DEFAULT_FISCAL_DAY_SETTINGS,
  FISCAL_DAY_TASK_TIMEOUT,
  FISCAL_DAY_WORKFLOW_TYPE,
  dayEndMs,
  fiscalDayEntrySignal,
  fiscalDayWorkflowId,
  getFiscalDayQuery,
  isoDateOf,
  type FiscalDayEvent,
  type FiscalDayKey,
  type TaxBands,
} from '../../src/contracts/fiscal-day.js';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox } from '../../sandbox/server.js';
import type { InspectedDocument } from '../../sandbox/compliance/inspection-types.js';
import { benchFixture, progress, workerProcessEnv, type BenchTemporal } from './env.js';
import type { FiscalDaySizes } from './options.js';
import type { FiscalDayCheck, FiscalDayReport } from './fiscal-day-report.js';
import { round } from './stats.js';
import { spawnStockWorker, type StockWorkerProcess } from './stock-process.js';

const GRACE_SECONDS = 20;
const OUTAGE_SECONDS = 30;
/**
 * The workers' start-up before the first sale is due, the sandbox's midnight the section's `beforeSeconds` after that:
 * about 5 s with the bundle an earlier start made, 15 s bundling side by side.
 */
const START_UP_MS = 20_000;
const BUSINESS = DEMO.businesses.nairobi;
const BRANCHES = [DEMO.branches.nairobiCbd, DEMO.branches.nairobiWestlands];
/** Four tax letters; no item tracks stock here, so no stock ledger sends a request while the days close. */
const LINES: SaleInput['lines'] = [
  { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
  { itemId: DEMO.items.milk, quantity: 3, unitPrice: 64.99 },
  { itemId: DEMO.items.maizeSeed, quantity: 1, unitPrice: 333.33 },
  { itemId: DEMO.items.giftVoucher, quantity: 1, unitPrice: 1000 },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const counted = (xs: Record<string, number>) => Object.values(xs).reduce((a, b) => a + b, 0);

/** Cents per letter, summed here from the documents' lines: not the worker's code. */
function independentSum(documents: readonly InspectedDocument[]): TaxBands {
  const sums: TaxBands = {};
  for (const { sale } of documents)
    for (const line of sale.lines) {
      const band = (sums[line.taxTypeCode ?? '-'] ??= { taxable: 0, tax: 0, total: 0 });
      band.taxable += Math.round(line.taxableAmount * 100);
      band.tax += Math.round(line.taxAmount * 100);
      band.total += Math.round(line.total * 100);
    }
  return sums;
}

const sameBands = (a: TaxBands, b: TaxBands) => {
  const letters = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...letters].every((l) => (['taxable', 'tax', 'total'] as const).every((k) => a[l]?.[k] === b[l]?.[k]));
};

/** When each day event first stood in the sink file, read every 100 ms from the section's start. */
function watchSink(path: string) {
  const seen = new Map<string, { event: FiscalDayEvent; at: number }>();
  const read = async () => {
    const text = await readFile(path, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (!line.includes('"fiscal_day.')) continue;
      const event = JSON.parse(line) as FiscalDayEvent;
      if (!seen.has(event.id)) seen.set(event.id, { event, at: Date.now() });
    }
  };
  let reading = Promise.resolve();
  const timer = setInterval(() => {
    reading = reading.then(read, read);
  }, 100);
  return { seen, stop: () => clearInterval(timer) };
}

export async function measureFiscalDay(
  t: BenchTemporal,
  options: FiscalDaySizes & { tag: string },
): Promise<FiscalDayReport> {
  const { tag } = options;
  const spawnAt = Date.now();
  // The sandbox's next midnight (Nairobi): the workers' start-up, then the sales before it.
  const midnightReal = spawnAt + START_UP_MS + options.beforeSeconds * 1000;
  const nextNairobiMidnight = dayEndMs(new Date(midnightReal + 3 * 3_600_000).toISOString().slice(0, 10));
  const aheadMs = nextNairobiMidnight - midnightReal;
  const sandbox = await startSandbox({
    fixture: {
      compliance: benchFixture({
        requestsPerWindow: 100_000,
        adjust: (f) => {
          // One attempt: a callback sent while the worker is down is lost, and the sale reads its outcome itself.
          f.callbacks = { retryScheduleMs: [0], timeoutMs: 1_000 };
          for (const business of f.businesses ?? [])
            if (business.id === BUSINESS) business.items = business.items?.map((i) => ({ ...i, stockTracked: false }));
        },
      }),
    },
    now: () => Date.now() + aheadMs,
  });
  const sinkPath = join(await mkdtemp(join(tmpdir(), 'bench-fiscal-day-')), 'events.ndjson');
  const taskQueue = `bench-day-${randomUUID().slice(0, 8)}`;
  const withoutQueue = `${taskQueue}-without`;
  const callbackPort = 20_000 + Math.floor(Math.random() * 20_000);
  const env = {
    ...workerProcessEnv(t, sandbox, 100_000),
    BENCH_TASK_QUEUE: taskQueue,
    PURCHASES_SINK: `file:${sinkPath}`,
    // The sink is the purchases sync's: once a week (its first at start-up, long before the close).
    PURCHASES_SYNC_INTERVAL: '7d',
    FISCAL_DAY_GRACE: `${GRACE_SECONDS} seconds`,
    FISCAL_DAY_KEEP_OPEN: '2 hours',
    FISCAL_DAY_CLOCK_AHEAD: `${aheadMs} ms`,
    CALLBACK_PUBLIC_BASE_URL: `http://127.0.0.1:${callbackPort}`,
    CALLBACK_PORT: String(callbackPort),
    CALLBACK_HOST: '127.0.0.1',
    CALLBACK_SECRET: randomUUID() + randomUUID(),
    COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
    WORKER_METRICS_BIND_ADDRESS: '',
  };
  const sink = watchSink(sinkPath);
  let spawned = 0;
  const spawn = () => spawnStockWorker(`fiscal-day worker ${++spawned}`, env);
  let worker: StockWorkerProcess | undefined = spawn();
  const without = spawnStockWorker('fiscal-day worker without books', {
    ...workerProcessEnv(t, sandbox, 100_000),
    BENCH_TASK_QUEUE: withoutQueue,
    FISCAL_DAY_BOOKS: 'off',
  });
  const started: SaleInput[] = [];
  try {
    await Promise.all([worker.ready, without.ready]);
    const spare = midnightReal - options.beforeSeconds * 1000 - Date.now();
    if (spare < 0) progress(`fiscalDay: the workers were ready ${round(-spare / 1000)} s after the first sale was due`);
    const sales = new SalesClient(t.client, { taskQueue });
    progress(
      `fiscalDay: the sandbox's midnight in ${round((midnightReal - Date.now()) / 1000)} s (its clock ` +
        `${round(aheadMs / 3_600_000)} h ahead); ${options.sales} sales over ${options.beforeSeconds} + ` +
        `${options.afterSeconds} s`,
    );
    // Some callbacks held back past the section's end: lost to their sales, which read their outcome themselves.
    const held = Math.ceil(options.sales / 20);
    await sandbox.inspector.addFault({ kind: 'callback-delay', delayMs: 3_600_000, times: held });
    const firstSale = midnightReal - options.beforeSeconds * 1000;
    const lastSale = midnightReal + options.afterSeconds * 1000;
    const kinds = ['ASYNC-', '', 'ASYNC-', 'FLAKY-', 'ASYNC-'];
    const events: Array<[number, () => Promise<void>]> = [];
    for (let i = 0; i < options.sales; i++) {
      const at = firstSale + ((lastSale - firstSale) * i) / options.sales;
      const input: SaleInput = {
        businessId: BUSINESS,
        traderInvoiceNumber: `${kinds[i % kinds.length]}DAY-${tag}-${String(i).padStart(4, '0')}`,
        saleDate: '2026-01-01',
        branchId: BRANCHES[i % 2]!,
        lines: LINES,
        options: { refundWindowDays: i % 10 === 3 ? 1 : 0, outcomeTimeout: '2 minutes' },
      };
      events.push([at, async () => void (await sales.startSale(input), started.push(input))]);
    }
    let kills = 0;
    // Down 5 s before it starts again, as a restarted machine: the callbacks sent meanwhile find nobody.
    const kill = async () => {
      await worker?.kill();
      kills++;
      await sleep(5_000);
      worker = spawn();
      await worker.ready;
    };
    events.push([midnightReal - 25_000, kill], [midnightReal + 15_000, kill]);
    events.push([
      midnightReal - (OUTAGE_SECONDS / 2) * 1000,
      async () =>
        void (await sandbox.inspector.addOutage({
          kind: 'authority',
          mode: 'reject',
          durationMs: OUTAGE_SECONDS * 1000,
        })),
    ]);
    events.sort((a, b) => a[0] - b[0]);
    const pending: Array<Promise<void>> = [];
    for (const [at, run] of events) {
      await sleep(at - Date.now());
      pending.push(run());
    }
    await Promise.all(pending);

    // Each sale to its end, then a refund of one in ten, to its end.
    await settle(
      t,
      started.map((s) => saleWorkflowId(s.businessId, s.traderInvoiceNumber)),
    );
    const refunded = started.filter((s) => s.options?.refundWindowDays === 1);
    await Promise.all(
      refunded.map((s, i) =>
        sales.refund(s.businessId, s.traderInvoiceNumber, {
          reason: '06',
          returnDate: '2026-01-01',
          traderInvoiceNumber: `CN-DAY-${tag}-${i}`,
        }),
      ),
    );
    const requestsAtRest = sandbox.stats.records({ service: 'compliance' }).length;

    // The documents the sandbox signed, by control unit and day.
    const ours = new Set([
      ...started.map((s) => s.traderInvoiceNumber),
      ...refunded.map((_, i) => `CN-DAY-${tag}-${i}`),
    ]);
    const documents = (await sandbox.inspector.documents({ businessId: BUSINESS })).filter(
      (d) => ours.has(d.sale.traderInvoiceNumber) && d.sale.receipt?.scuId,
    );
    const byDay = new Map<string, InspectedDocument[]>();
    for (const d of documents) {
      const key = `${isoDateOf(d.sale.receipt!.scuDate)}|${d.sale.receipt!.scuId}`;
      byDay.set(key, [...(byDay.get(key) ?? []), d]);
    }
    const dayKeys = [...byDay.keys()].sort();
    const firstDate = dayKeys[0]!.split('|')[0]!;
    const closeAtReal = dayEndMs(firstDate) + GRACE_SECONDS * 1000 - aheadMs;

    // The first day closes by its timer; the second is closed by an operator.
    const firstCloses = () =>
      [...sink.seen.values()].filter((s) => s.event.type === 'fiscal_day.closed' && s.event.day.date === firstDate);
    for (let until = Math.max(Date.now(), closeAtReal) + 90_000; Date.now() < until && firstCloses().length < 2;)
      await sleep(200);
    const closeDelays = firstCloses().map((s) => (s.at - closeAtReal) / 1000);
    const handles = dayKeys.map((key) => {
      const [date, scuId] = key.split('|') as [string, string];
      const day: FiscalDayKey = { businessId: BUSINESS, scuId, date };
      return { key, day, handle: t.client.workflow.getHandle(fiscalDayWorkflowId(taskQueue, day)) };
    });
    const days = new FiscalDaysClient(t.client, { taskQueue });
    const closedBy = new Map<string, FiscalDayCheck['closedBy']>();
    for (const { key, day, handle } of handles) {
      const summary = await handle.query(getFiscalDayQuery);
      if (summary.status === 'closed') closedBy.set(key, 'timer');
      else {
        await days.close(day);
        closedBy.set(key, 'operator');
      }
    }

    // A till's close for the first control unit's first day: its own counts and totals, three differences planted.
    const [tillKey] = dayKeys;
    const tillDocuments = byDay.get(tillKey!)!;
    const tillSales = tillDocuments.filter((d) => d.sale.type === 'sale').map((d) => d.sale.traderInvoiceNumber);
    const omitted = tillSales[0]!;
    const neverSent = `DAY-${tag}-TILL-ONLY`;
    const tillTaxes = independentSum(tillDocuments);
    const [letter] = Object.keys(tillTaxes).sort();
    const receipts: Record<string, number> = {};
    for (const d of tillDocuments)
      receipts[d.sale.receipt!.receiptLabel ?? '?'] = (receipts[d.sale.receipt!.receiptLabel ?? '?'] ?? 0) + 1;
    const [tillDate, tillScu] = tillKey!.split('|') as [string, string];
    const till = {
      businessId: BUSINESS,
      scuId: tillScu,
      date: tillDate,
      receipts,
      taxes: Object.fromEntries(
        Object.entries(tillTaxes).map(([l, b]) => [
          l,
          { taxable: b.taxable / 100, tax: b.tax / 100, total: (b.total + (l === letter ? 100 : 0)) / 100 },
        ]),
      ),
      invoiceNumbers: [...tillSales.slice(1), neverSent],
    };
    let match = await days.matchTillClose(till);
    for (let tries = 0; tries < 20 && match.notOnTillCount === 0; tries++) {
      await sleep(500);
      match = await days.matchTillClose(till);
    }
    const planted = [
      match.notSigned.some((n) => n.traderInvoiceNumber === neverSent && n.state === 'never_started'),
      match.notOnTill.some((n) => n.traderInvoiceNumber === omitted),
      match.taxes.some((d) => d.letter === letter && d.amount === 'total'),
    ];
    const falseDifferences =
      match.receipts.length +
      match.taxes.filter((d) => !(d.letter === letter && d.amount === 'total')).length +
      match.notSigned.filter((n) => n.traderInvoiceNumber !== neverSent).length +
      match.notOnTill.filter((n) => n.traderInvoiceNumber !== omitted).length;
    const extraRequests = sandbox.stats.records({ service: 'compliance' }).length - requestsAtRest;

    // Each day's figures against the independent sum: a late document is in its book at once, its amendment after.
    const checks: FiscalDayCheck[] = [];
    for (const { key, handle } of handles) {
      const book = await handle.query(getFiscalDayQuery);
      const signed: Record<string, number> = {};
      for (const d of byDay.get(key)!)
        signed[d.sale.receipt!.receiptLabel ?? '?'] = (signed[d.sale.receipt!.receiptLabel ?? '?'] ?? 0) + 1;
      checks.push({
        scuId: book.scuId,
        date: book.date,
        signed,
        counted: book.receipts,
        totalsExact: sameBands(book.taxes, independentSum(byDay.get(key)!)),
        closedBy: book.status === 'closed' ? closedBy.get(key)! : 'not closed',
        amendments: book.amendments,
        missing: Object.values(book.numbering).reduce((s, n) => s + n.missing, 0),
      });
    }
    const over = (a: Record<string, number>, b: Record<string, number>) =>
      Object.keys({ ...a, ...b }).reduce((s, l) => s + Math.max(0, (a[l] ?? 0) - (b[l] ?? 0)), 0);
    const failed = (await sandbox.inspector.callbackAttempts()).filter((a) => a.status === null || a.status >= 300);
    const heldBack = (await sandbox.inspector.requests()).faultsInjected['callback-delay'] ?? 0;

    const busyDay = await measureBusyDay(t, taskQueue, options.busyDayEntries, firstDate);
    const tillMs = await tillLatency(t, taskQueue, withoutQueue, options.tillPairs, tag);

    return {
      sales: started.length,
      refunds: refunded.length,
      clockAheadSeconds: round(aheadMs / 1000),
      graceSeconds: GRACE_SECONDS,
      workerKills: kills,
      callbacksLost: failed.length + heldBack,
      outageSeconds: OUTAGE_SECONDS,
      days: checks,
      totalsExact: round(checks.filter((c) => c.totalsExact).length / checks.length, 3),
      countedTwice: checks.reduce((s, c) => s + over(c.counted, c.signed), 0),
      missed: checks.reduce((s, c) => s + over(c.signed, c.counted), 0),
      differencesFound: round(planted.filter(Boolean).length / planted.length, 3),
      falseDifferences,
      named: [
        ...match.receipts.map((r) => `count ${r.label} ${r.till}/${r.authority}`),
        ...match.taxes.map((d) => `${d.letter} ${d.amount} ${d.till}/${d.authority}`),
        ...match.notSigned.map((n) => `not signed ${n.traderInvoiceNumber} (${n.state})`),
        ...match.notOnTill.map((n) => `not on till ${n.traderInvoiceNumber}`),
      ],
      extraRequestsPerSale: round(extraRequests / started.length, 3),
      maxPayloadBytes: busyDay.maxPayloadBytes,
      busyDay: busyDay.shape,
      // A first day's close never seen is no delay met.
      closeDelaySeconds:
        closeDelays.length < dayKeys.filter((k) => k.startsWith(firstDate)).length
          ? Number.POSITIVE_INFINITY
          : round(Math.max(...closeDelays), 1),
      tillLatencyRatio: round(tillMs.withBooks / tillMs.without, 3),
      tillMs,
    };
  } finally {
    sink.stop();
    await worker?.stop();
    await without.stop();
    await endDayBooks(t, [taskQueue, withoutQueue]);
    await sandbox.close();
  }
}

/** Until every workflow named closed (5 minutes at most): a sale waits out the outage and the kills by itself. */
async function settle(t: BenchTemporal, workflowIds: readonly string[]): Promise<void> {
  const until = Date.now() + 300_000;
  const open = new Set(workflowIds);
  while (open.size > 0 && Date.now() < until) {
    for (const id of [...open]) {
      const { status } = await t.client.workflow.getHandle(id).describe();
      if (status.name !== 'RUNNING') open.delete(id);
    }
    if (open.size > 0) await sleep(1_000);
  }
  if (open.size > 0) throw new Error(`fiscalDay: ${open.size} sales still open after 5 minutes`);
}

/**
 * A day of `entries` receipts with a gap before each (another system signing every other receipt on the control unit,
 * the most gaps a day can have): the largest payload its book writes.
 */
async function measureBusyDay(t: BenchTemporal, taskQueue: string, entries: number, date: string) {
  const began = Date.now();
  const day = { businessId: BUSINESS, scuId: 'KRACU-BENCH-BUSY', date };
  const workflowId = fiscalDayWorkflowId(taskQueue, day);
  const entry = (n: number) => ({
    ...day,
    entries: [
      {
        documentId: `busy_${n}`,
        traderInvoiceNumber: `BUSY-${n}`,
        label: n % 50 === 0 ? 'NC' : 'NS',
        receiptNumber: 2 * n,
        cuInvoiceNo: null,
        taxes: { A: { taxable: 12_500, tax: 0, total: 12_500 }, B: { taxable: 43_103, tax: 6_897, total: 50_000 } },
      },
    ],
  });
  const first = await t.client.workflow.signalWithStart(FISCAL_DAY_WORKFLOW_TYPE, {
    workflowId,
    taskQueue,
    args: [{ ...day, settings: DEFAULT_FISCAL_DAY_SETTINGS }],
    signal: fiscalDayEntrySignal,
    signalArgs: [entry(1)],
    workflowTaskTimeout: FISCAL_DAY_TASK_TIMEOUT,
  });
  for (let from = 2; from <= entries; from += 200)
    await Promise.all(
      Array.from({ length: Math.min(200, entries - from + 1) }, (_, i) =>
        first.signal(fiscalDayEntrySignal, entry(from + i)),
      ),
    );
  const handle = t.client.workflow.getHandle(workflowId);
  for (let until = Date.now() + 120_000; Date.now() < until; await sleep(500)) {
    const book = await handle.query(getFiscalDayQuery).catch(() => undefined);
    if (book && counted(book.receipts) >= entries) break;
  }
  // A burst of entries fails the book's continue-as-new until it passes; the client rides that out.
  const closed = await new FiscalDaysClient(t.client, { taskQueue }).close(day);
  await sleep(2_000);
  let maxPayloadBytes = 0;
  let runs = 0;
  const { firstRunId } = (await handle.describe()).raw.workflowExecutionInfo ?? {};
  for (let runId: string | null | undefined = firstRunId; runId; runs++) {
    const history = await t.client.workflow.getHandle(workflowId, runId).fetchHistory();
    for (const event of history.events ?? []) {
      const payloads = [
        event.workflowExecutionStartedEventAttributes?.input,
        event.workflowExecutionContinuedAsNewEventAttributes?.input,
        event.activityTaskScheduledEventAttributes?.input,
        event.workflowExecutionSignaledEventAttributes?.input,
        event.workflowExecutionUpdateCompletedEventAttributes?.outcome?.success,
        event.workflowExecutionCompletedEventAttributes?.result,
      ].flatMap((p) => p?.payloads ?? []);
      for (const p of payloads) maxPayloadBytes = Math.max(maxPayloadBytes, p.data?.length ?? 0);
    }
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  const gaps = Object.values(closed.numbering).reduce((s, n) => s + n.gaps.length, 0);
  return {
    maxPayloadBytes,
    shape: { entries: counted(closed.receipts), gaps, runs, seconds: round((Date.now() - began) / 1000) },
  };
}

/**
 * Pairs of till calls, one on each worker, the order alternating: the medians of each. After the days are checked:
 * these sales reach the second day's book as amendments, which nothing reads any more.
 */
async function tillLatency(t: BenchTemporal, withQueue: string, withoutQueue: string, pairs: number, tag: string) {
  const tills = {
    with: new SalesClient(t.client, { taskQueue: withQueue }),
    without: new SalesClient(t.client, { taskQueue: withoutQueue }),
  };
  const ms: Record<'with' | 'without', number[]> = { with: [], without: [] };
  for (let i = 0; i < pairs + 2; i++) {
    const order = i % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
    for (const side of order) {
      const began = performance.now();
      const answer = await tills[side].startAndAwaitReceipt({
        businessId: BUSINESS,
        traderInvoiceNumber: `DAY-TILL-${tag}-${side}-${i}`,
        saleDate: '2026-01-01',
        lines: [{ itemId: DEMO.items.giftVoucher, quantity: 1, unitPrice: 100 }],
        options: { refundWindowDays: 0 },
      });
      if (!answer.signed) throw new Error(`fiscalDay: a till sale was not signed: ${answer.reason ?? ''}`);
      // The first pair warms both workers up.
      if (i >= 2) ms[side].push(performance.now() - began);
    }
  }
  const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { withBooks: round(median(ms.with), 1), without: round(median(ms.without), 1), pairs };
}

/** A day book stays open for its amendments: ended with the section. */
async function endDayBooks(t: BenchTemporal, queues: readonly string[]): Promise<void> {
  for (const queue of queues) {
    const running = t.client.workflow.list({
      query: `WorkflowType = '${FISCAL_DAY_WORKFLOW_TYPE}' AND TaskQueue = '${queue}' AND ExecutionStatus = 'Running'`,
    });
    for await (const book of running)
      await t.client.workflow
        .getHandle(book.workflowId, book.runId)
        .terminate('the benchmark section is over')
        .catch(() => undefined);
  }
}
