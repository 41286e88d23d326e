/** The stock section in the report: its three targets, its tables, and `--only stock` / `--assert=stock.*`. */
import { describe, expect, it } from 'vitest';
import { parseArgs, stockSizes } from '../../tools/bench/options.js';
import { checkTargets, formatReport, TARGET_KEYS, type BenchReport } from '../../tools/bench/report.js';
import type { StockReport } from '../../tools/bench/stock-report.js';
import { runMs, stockScale } from '../../tools/bench/stock-math.js';

const base: Omit<BenchReport, 'targets'> = {
  server: 'dev',
  temporalAddress: '127.0.0.1:7233',
  machine: { cpus: 2, cpuModel: 'test', node: 'v20', platform: 'linux' },
  date: '2026-11-23T00:00:00Z',
  commit: 'abc',
  mode: 'quick',
  sections: ['stock'],
  wallSeconds: {},
  samples: {},
};

const spread = { n: 1, p50: 5, p90: 9, max: 12 };
const ledger = {
  runs: 1,
  events: 100,
  handOvers: 10,
  workflowTaskWaitMs: spread,
  workflowTaskRunMs: spread,
  movementWaitMs: spread,
  movements: 5,
  notStartedInTime: 2,
  timedOutRunning: 0,
  workflowTaskFailures: 0,
  failures: {},
};

const held = { mismatched: 0, duplicateReferenceIds: 0, examples: { mismatched: [], duplicateReferenceIds: [] } };

function stock(
  signedPerMinute: number,
  p99Seconds: number,
  operatorShare: number,
  more: Partial<StockReport['operator']> = {},
): StockReport {
  return {
    k: 12,
    windowMs: 5_000,
    requestsPerMinute: 120,
    maxDelaySeconds: 120,
    catalogue: 30,
    linesPerSale: 3,
    throughput: {
      business: 'biz_stock_x_backlog',
      tills: 30,
      warmMinutes: 2.5,
      steadyMinutes: 10,
      sales: 1_300,
      steadySales: 1_040,
      signedPerMinute,
      lag: { lines: 3_120, uncarried: 0, p50Seconds: 90, p99Seconds, maxSeconds: p99Seconds + 5 },
      callsPerSale: 1.16,
      steadyCallsPerSale: 1.14,
      steadyUtilisation: 0.99,
      requests: 1_508,
      rateLimited: 0,
      routes: { 'POST /v1/sales': 1_300, 'POST /v1/stock/adjustments': 208 },
      movements: 178,
      probes: 30,
      linesPerMovement: 21.9,
      exactlyOnce: held,
      drainSeconds: 4,
      cpu: [{ process: 'worker', cpuSeconds: 30, percentOfOneCore: 60 }],
      ledger,
      settled: true,
    },
    operator: {
      business: 'biz_stock_x_faults',
      tills: 10,
      sales: 160,
      faultShare: 0.3,
      commitThenFail: 20,
      kills: 2,
      salesNeedingOperator: Math.round(operatorShare * 160),
      operatorShare,
      movementsNeedingOperator: 0,
      settledByEvidence: 18,
      resentAfterEvidence: 0,
      probes: 40,
      decisions: [],
      exactlyOnce: held,
      settleSeconds: 40,
      ledger,
      settled: true,
      ...more,
    },
  };
}

const judged = (s: StockReport) => Object.fromEntries(checkTargets({ ...base, stock: s }).map((t) => [t.key, t.met]));

describe('the stock targets', () => {
  it('are three, the requests per sale reported only', () => {
    expect(TARGET_KEYS.filter((k) => k.startsWith('stock.'))).toEqual([
      'stock.signedPerMinute',
      'stock.lagP99Seconds',
      'stock.operatorShare',
    ]);
  });

  it('are met at their bounds: 100 signed a minute, a p99 lag of 300 s, 1 sale in 16 needing an operator', () => {
    expect(judged(stock(100, 300, 1 / 16))).toEqual({
      'stock.signedPerMinute': true,
      'stock.lagP99Seconds': true,
      'stock.operatorShare': true,
    });
    expect(judged(stock(99.9, 300.1, 0.0626))).toEqual({
      'stock.signedPerMinute': false,
      'stock.lagP99Seconds': false,
      'stock.operatorShare': false,
    });
  });

  it('are never met by a line never carried (an infinite lag) or a run that did not settle (NaN)', () => {
    expect(judged(stock(110, Number.POSITIVE_INFINITY, Number.NaN))).toMatchObject({
      'stock.lagP99Seconds': false,
      'stock.operatorShare': false,
    });
  });
});

describe('the stock tables', () => {
  it('print every key with its detail, and say the exactly-once rule held', () => {
    const text = formatReport({ ...base, stock: stock(104.2, 151.3, 0), targets: [] });
    expect(text).toMatch(/stock\.signedPerMinute +104\.2 +≥ 100 +1040 sales signed in 10 steady minutes/);
    expect(text).toMatch(/stock\.lagP99Seconds +151\.3 +≤ 300/);
    expect(text).toMatch(/stock\.callsPerSale +1\.16 +reported/);
    expect(text).toMatch(/stock\.operatorShare +0 +≤ 1\/16 +0 of 160 sales/);
    expect(text).toContain("every item's recorded quantity = its lines', no referenceId twice");
    expect(text).not.toContain('NOT settled');
  });

  it("show a ledger left unsettled, what was left, and the operator's decisions", () => {
    const s = stock(104, 151, Number.NaN, {
      settled: false,
      left: { pendingLines: 2, open: [{ referenceId: 'stk:ab:7', itemId: 'itm_a', status: 'uncertain', lines: 5 }] },
      decisions: [{ referenceId: 'stk:ab:3', decision: 'applied', problem: 'someone else moved the item', sales: 4 }],
    });
    const text = formatReport({ ...base, stock: s, targets: [] });
    expect(text).toMatch(/faults run's ledger NOT settled: 2 lines pending/);
    expect(text).toMatch(/stk:ab:7 +itm_a +uncertain +5/);
    expect(text).toMatch(/stk:ab:3 +applied +someone else moved the item +4/);
  });
});

describe("the stock section's sizes and command line", () => {
  it('is a section of its own, assertable by key', () => {
    expect(parseArgs(['--only', 'stock']).sections).toEqual(['stock']);
    expect(parseArgs(['--assert=stock.signedPerMinute,stock.operatorShare']).assertKeys).toEqual([
      'stock.signedPerMinute',
      'stock.operatorShare',
    ]);
  });

  it('scales to whole milliseconds; the full run keeps 15 scaled minutes of backlog, the quick one 8 (a max delay of warm-up, 5 steady) in 120 s', () => {
    for (const quick of [true, false]) {
      const s = stockSizes(quick);
      expect(() => stockScale(s.k, s)).not.toThrow();
    }
    const full = stockSizes(false);
    expect(full.warmMinutes + full.steadyMinutes).toBeGreaterThanOrEqual(15);
    const q = stockSizes(true);
    expect(q.warmMinutes).toBeGreaterThanOrEqual(q.maxDelaySeconds / 60);
    expect(q.steadyMinutes).toBeGreaterThanOrEqual(5);
    expect(runMs(q.warmMinutes + q.steadyMinutes, q.k)).toBeLessThanOrEqual(120_000);
  });
});
