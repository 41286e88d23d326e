/**
 * The fleet's levels from Temporal's visibility: what each count asks for, where its number goes, and that a count
 * that fails leaves its metric as it was while the others go on.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OPERATOR_WORKFLOW_TYPES } from '../../src/metrics/catalogue.js';
import { watchOperatorWork } from '../../src/metrics/operator-work.js';
import type { MetricsRecorder } from '../../src/metrics/recorder.js';

const INTERVAL_MS = 60_000;

function fakes(answer: (query: string) => number, watches: () => Array<{ memo?: Record<string, unknown> }> = () => []) {
  const queries: string[] = [];
  const sets: Array<{ name: string; value: number; labels: Record<string, string> }> = [];
  const warnings: Array<Record<string, unknown>> = [];
  const client = {
    workflow: {
      count: async (query: string) => {
        queries.push(query);
        return { count: answer(query), groups: [] };
      },
      list: ({ query }: { query: string }) => {
        queries.push(query);
        return (async function* () {
          yield* watches();
        })();
      },
    },
  } as unknown as Client;
  const metrics: MetricsRecorder = {
    count: () => undefined,
    set: (name, value, labels) => void sets.push({ name, value, labels }),
    knowBusinesses: () => undefined,
    knowApplications: () => undefined,
  };
  const logger = { warn: (fields: Record<string, unknown>) => void warnings.push(fields) } as unknown as Logger;
  return { client, metrics, logger, queries, sets, warnings };
}

const outageLevels = (sets: ReturnType<typeof fakes>['sets']) =>
  sets.filter((s) => s.name === 'etims_sales_awaiting_outage').map((s) => [s.labels['side'], s.value]);

describe('watchOperatorWork', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("counts the fleet's sales waiting out an outage, by side, next to the operator work", async () => {
    const f = fakes((query) => {
      if (query.includes("'awaiting_service'")) return 3;
      return query.includes('saleWorkflow') && query.endsWith('NeedsAttention = true') ? 1 : 0;
    });
    const stop = watchOperatorWork({ ...f, taskQueue: "o'hare", intervalMs: INTERVAL_MS });
    await vi.advanceTimersByTimeAsync(0);
    stop();
    const running = "WorkflowType = 'saleWorkflow' AND TaskQueue = 'o\\'hare' AND ExecutionStatus = 'Running'";
    expect(f.queries).toContain(`${running} AND FiscalStatus = 'awaiting_service' AND NeedsAttention = false`);
    expect(f.queries).toContain(`${running} AND FiscalStatus = 'awaiting_authority' AND NeedsAttention = false`);
    expect(f.queries).toContain(`${running} AND NeedsAttention = true`);
    expect(f.queries).toHaveLength(OPERATOR_WORKFLOW_TYPES.length + 3);
    expect(outageLevels(f.sets)).toEqual([
      ['service', 3],
      ['authority', 0],
    ]);
    expect(f.sets).toContainEqual({
      name: 'etims_operator_work_waiting',
      value: 1,
      labels: { workflow_type: 'saleWorkflow' },
    });
  });

  it('keeps the last value of a count that fails, counts the others, and counts again after the interval', async () => {
    let visibilityDown = false;
    const f = fakes((query) => {
      if (visibilityDown && query.includes('awaiting_authority')) throw new Error('visibility unavailable');
      return query.includes('awaiting_') ? 2 : 0;
    });
    const stop = watchOperatorWork({ ...f, taskQueue: 'sales', intervalMs: INTERVAL_MS });
    await vi.advanceTimersByTimeAsync(0);
    visibilityDown = true;
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    stop();
    expect(outageLevels(f.sets)).toEqual([
      ['service', 2],
      ['authority', 2],
      ['service', 2],
    ]);
    expect(f.warnings).toEqual([
      expect.objectContaining({
        err: { message: 'visibility unavailable' },
        metric: 'etims_sales_awaiting_outage',
        side: 'authority',
      }),
    ]);
    const asked = f.queries.length;
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    expect(f.queries).toHaveLength(asked);
  });

  it('sets the sales waiting per application from the running watches’ memos, and 0 once a watch is gone', async () => {
    let watches: Array<{ memo?: Record<string, unknown> }> = [
      { memo: { application: 'retail', waiting: { service: 4, authority: 0 } } },
      { memo: { application: 'wholesale', waiting: { service: 0, authority: 2 } } },
      // A watch no sale has named yet (or of an older worker) says nothing.
      { memo: {} },
    ];
    const f = fakes(
      () => 0,
      () => watches,
    );
    const stop = watchOperatorWork({ ...f, taskQueue: 'sales', intervalMs: INTERVAL_MS });
    await vi.advanceTimersByTimeAsync(0);
    expect(f.queries).toContain(
      "WorkflowType = 'outageWatchWorkflow' AND TaskQueue = 'sales' AND ExecutionStatus = 'Running'",
    );
    const perApplication = () =>
      f.sets
        .filter((s) => s.name === 'etims_application_sales_awaiting_outage')
        .map((s) => [s.labels['application'], s.labels['side'], s.value]);
    expect(perApplication()).toEqual([
      ['retail', 'service', 4],
      ['retail', 'authority', 0],
      ['wholesale', 'service', 0],
      ['wholesale', 'authority', 2],
    ]);
    watches = [{ memo: { application: 'wholesale', waiting: { service: 0, authority: 1 } } }];
    f.sets.length = 0;
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    stop();
    expect(perApplication()).toEqual([
      ['wholesale', 'service', 0],
      ['wholesale', 'authority', 1],
      ['retail', 'service', 0],
      ['retail', 'authority', 0],
    ]);
  });
});
