/**
 * Every workflow replays against the histories recorded from real runs of each released version
 * (test/histories/<version>/, written by tools/record-histories.ts), so a change that would break executions
 * already running fails here first.
 */
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Runtime, Worker, bundleWorkflowCode, makeTelemetryFilterString, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { LEAN_SALE_PATH_PATCH, REFUND_BY_PROCESS_PATCH } from '../../workflows/sale/patches.js';
import { testLogger } from '../helpers/temporal.js';
import { saleBundle } from './harness.js';

const historiesDir = fileURLToPath(new URL('../histories/', import.meta.url));

interface StoredHistory {
  workflowId: string;
  workflowType: string;
  history: ReturnType<typeof historyFromJSON>;
}

let stored: StoredHistory[];

beforeAll(async () => {
  // The negative test fails workflow tasks on purpose; core would log each as a warning.
  Runtime.install({ logger: testLogger, telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  const files = (await readdir(historiesDir, { recursive: true })).filter((f) => f.endsWith('.json')).toSorted();
  stored = await Promise.all(
    files.map(async (file) => {
      const history = historyFromJSON(JSON.parse(await readFile(`${historiesDir}${file}`, 'utf8')));
      const workflowType = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
      return { workflowId: file.replace(/\.json$/, ''), workflowType, history };
    }),
  );
});

async function replayAll(workflowBundle: Awaited<ReturnType<typeof saleBundle>>, histories: StoredHistory[]): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle }, histories)) results.push(result);
  return results;
}

describe('replay of recorded histories', () => {
  it('has recorded histories of every workflow', () => {
    const types = new Set(stored.map((h) => h.workflowType));
    expect([...types].toSorted()).toEqual(['itemRegistrationWorkflow', 'purchasesSyncWorkflow', 'reconciliationWorkflow', 'saleWorkflow', 'syncBatchWorkflow']);
    expect(stored.length).toBeGreaterThanOrEqual(6);
  });

  it('holds every run of an execution that continued as new: a deploy can find any of them running', () => {
    const started = (h: StoredHistory) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const runIds = new Set(stored.map((h) => started(h)?.originalExecutionRunId));
    const continued = stored.flatMap((h) => {
      const next = h.history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      return next ? [{ workflowId: h.workflowId, workflowType: h.workflowType, next }] : [];
    });
    expect(continued.filter((c) => !runIds.has(c.next)).map((c) => c.workflowId)).toEqual([]);
    // The chains the recorder makes on purpose: later runs start from what the previous one carried.
    expect(new Set(continued.map((c) => c.workflowType))).toEqual(new Set(['purchasesSyncWorkflow', 'syncBatchWorkflow']));
    expect(stored.some((h) => h.workflowType === 'purchasesSyncWorkflow' && started(h)?.continuedExecutionRunId)).toBe(true);
  });

  it('replays both sides of each sale patch: the refund by the update handler (0.1.0) or the process (0.2.0), the lean path (0.4.0)', () => {
    const patchesOf = (workflowId: string) =>
      (stored.find((h) => h.workflowId === workflowId)?.history.events ?? []).flatMap((e) => {
        const payload = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
        return payload ? [(defaultPayloadConverter.fromPayload(payload) as { id: string }).id] : [];
      });
    expect(patchesOf('0.1.0/sale-refunded')).toEqual([]);
    expect(patchesOf('0.2.0/sale-refunded')).toEqual([REFUND_BY_PROCESS_PATCH]);
    expect(patchesOf('0.3.0/sale-immediate')).toEqual([]);
    expect(patchesOf('0.4.0/sale-immediate')).toEqual([LEAN_SALE_PATH_PATCH]);
    expect(patchesOf('0.4.0/sale-refunded')).toEqual([LEAN_SALE_PATH_PATCH, REFUND_BY_PROCESS_PATCH]);
  });

  it('replays every recorded history with the current workflows without a nondeterminism error', async () => {
    const results = await replayAll(await saleBundle(), stored);
    expect(results.map((r) => [r.workflowId, r.error?.message ?? null])).toEqual(stored.map((h) => [h.workflowId, null]));
  }, 60_000);

  it('reports a workflow whose activities were reordered as nondeterministic (the replay test can fail)', async () => {
    const reordered = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./fixtures/reordered-sale.ts', import.meta.url)), logger: testLogger });
    const sales = stored.filter((h) => h.workflowType === 'saleWorkflow');
    const results = await replayAll(reordered, sales);
    expect(results).toHaveLength(sales.length);
    for (const result of results) {
      expect(result.error, result.workflowId).toBeInstanceOf(DeterminismViolationError);
      // Before 0.4 the order of checkItems and createSale; from 0.4 the lean path's patch marker, which it skips.
      expect(result.error?.message).toMatch(/checkItems|createSale|lean-sale-path/);
    }
  }, 60_000);
});
