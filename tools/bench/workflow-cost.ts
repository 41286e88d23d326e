/**
 * What a sale's workflow code costs the worker, against the floor's, without the noise of a live run: the stored
 * history of an immediate sale (test/histories/<version>/sale-immediate.json) and a floor workflow's history recorded
 * here are each replayed many times on one replay worker (workflow threads, as a worker runs them), and the bench
 * process's CPU is read around each batch. The promises each creates in its workflow context are counted too: the
 * SDK's promise hook captures and source-maps a stack trace for every one of them (its stack trace query), which
 * makes a workflow's promises a large part of its CPU. Why: docs/benchmarks.md, "Workflow cost".
 */
import { readFile } from 'node:fs/promises';
import { promiseHooks } from 'node:v8';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Client } from '@temporalio/client';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import type { BenchTemporal } from './env.js';
import { FLOOR_WORKFLOW_TYPE } from './floor-workflow.js';
import type { WorkflowCostReport } from './report.js';
import { round } from './stats.js';

type History = temporal.api.history.v1.IHistory;

/** A floor workflow run to its end on a worker of its own, its activity answered at once: its history. */
async function floorHistory(t: BenchTemporal, tag: string): Promise<History> {
  const taskQueue = `bench-floor-history-${tag}`;
  const workflowId = `floor-history-${tag}`;
  const worker = await Worker.create({
    connection: t.native,
    namespace: t.settings.namespace,
    taskQueue,
    workflowBundle: t.floorBundle,
    activities: { readLookup: () => Promise.resolve(0) },
  });
  // Plain payloads, as the stored sale's: the codec's cost is the same for both in a live run, and none here.
  const client = new Client({ connection: t.client.connection, namespace: t.settings.namespace });
  await worker.runUntil(client.workflow.execute(FLOOR_WORKFLOW_TYPE, { taskQueue, workflowId, args: [{}] }));
  return client.workflow.getHandle(workflowId).fetchHistory();
}

async function saleHistory(): Promise<History> {
  const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const path = new URL(`../../test/histories/${version}/sale-immediate.json`, import.meta.url);
  return historyFromJSON(JSON.parse(await readFile(path, 'utf8')));
}

/** Promises created inside the workflow's context (not this realm's) while one replay runs, in the main thread. */
async function promisesOf(bundle: WorkflowBundle, history: History): Promise<number> {
  let count = 0;
  const stop = promiseHooks.onInit((promise) => {
    if (!(promise instanceof Promise)) count++;
  });
  try {
    // A replay worker runs its workflows in this thread unless told otherwise, where this hook sees them.
    await Worker.runReplayHistory({ workflowBundle: bundle }, history, 'count');
  } finally {
    stop();
  }
  return count;
}

/** CPU milliseconds per replay over `replays` replays of one history on one replay worker. */
async function cpuPerReplay(bundle: WorkflowBundle, history: History, replays: number): Promise<number> {
  const copies = Array.from({ length: replays }, (_, i) => ({ workflowId: `replay-${i}`, history }));
  const before = process.cpuUsage();
  // In workflow threads, as a worker runs them: the replay worker's options leave the SDK's switch out of their type.
  const threaded = { workflowBundle: bundle, debugMode: false } as Parameters<typeof Worker.runReplayHistories>[0];
  for await (const result of Worker.runReplayHistories(threaded, copies)) if (result.error) throw result.error;
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / replays;
}

export async function measureWorkflowCost(
  t: BenchTemporal,
  options: { replays: number; tag: string },
): Promise<WorkflowCostReport> {
  const floor = { bundle: t.floorBundle, history: await floorHistory(t, options.tag) };
  const sale = { bundle: t.saleBundle, history: await saleHistory() };
  const promises = {
    sale: await promisesOf(sale.bundle, sale.history),
    floor: await promisesOf(floor.bundle, floor.history),
  };
  // A first round warms each bundle's workflow threads up; the second is measured.
  let cpuMs = { sale: 0, floor: 0 };
  for (let round = 0; round < 2; round++) {
    cpuMs = {
      floor: await cpuPerReplay(floor.bundle, floor.history, options.replays),
      sale: await cpuPerReplay(sale.bundle, sale.history, options.replays),
    };
  }
  return {
    replays: options.replays,
    promises,
    cpuPerReplayMs: { sale: round(cpuMs.sale), floor: round(cpuMs.floor) },
    cpuRatio: round(cpuMs.sale / cpuMs.floor),
  };
}
