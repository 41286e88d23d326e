// Triggers the business's schedule, so the sync runs exactly as a scheduled one does, never beside it.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { purchasesScheduleId, type PurchasesSyncResult } from '../contracts/purchases-sync.js';

export class PurchasesSyncError extends Error {
  override readonly name = 'PurchasesSyncError';

  constructor(
    readonly failure: 'not_scheduled' | 'timed_out',
    readonly scheduleId: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SyncPurchasesOptions {
  taskQueue?: string;
  /** Wait for the sync's result; else return once requested. */
  wait?: boolean;
  /** With `wait`: give up waiting after this long (default 30 minutes); the sync itself goes on. */
  timeoutMs?: number;
}

export interface SyncPurchasesResult {
  businessId: string;
  scheduleId: string;
  /** With `wait`: the sync's workflow id and its result. */
  workflowId?: string;
  result?: PurchasesSyncResult;
}

const POLL_MS = 250;

type Started = { workflowId: string; firstExecutionRunId: string };

/** The runs the schedule started; keyed by run too: two syncs started in the same second share a workflow id. */
function started(description: ScheduleDescription): Map<string, Started> {
  const { recentActions, runningActions } = description.info;
  const runs = [...recentActions.map((r) => r.action.workflow), ...runningActions.map((a) => a.workflow)];
  return new Map(runs.map((run) => [`${run.workflowId}/${run.firstExecutionRunId}`, run]));
}

/** If a sync is running, the requested one starts when it ends, so invoices pulled after this call are in it. */
export async function syncPurchasesNow(
  client: Client,
  businessId: string,
  options: SyncPurchasesOptions = {},
): Promise<SyncPurchasesResult> {
  if (businessId.trim() === '') throw new TypeError('businessId must not be empty');
  const scheduleId = purchasesScheduleId(businessId, options.taskQueue ?? WORKFLOW_TASK_QUEUE);
  const handle = client.schedule.getHandle(scheduleId);
  const before = await handle.describe().then(started, (err: unknown) => {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    throw new PurchasesSyncError(
      'not_scheduled',
      scheduleId,
      `no purchases sync schedule ${scheduleId}: start a worker with PURCHASES_SINK set ` +
        '(and the business in PURCHASES_SYNC_BUSINESSES, if that is set)',
    );
  });
  // Not the SDK's default ALLOW_ALL: docs/purchases-sync.md, "The ledger".
  await handle.trigger(ScheduleOverlapPolicy.BUFFER_ONE);
  if (!options.wait) return { businessId, scheduleId };

  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  const timedOut = () =>
    new PurchasesSyncError(
      'timed_out',
      scheduleId,
      `the sync of ${businessId} did not finish in time; it goes on (schedule ${scheduleId})`,
    );
  let run: Started | undefined;
  while (run === undefined) {
    if (Date.now() > deadline) throw timedOut();
    await sleep(POLL_MS);
    run = [...started(await handle.describe())].find(([key]) => !before.has(key))?.[1];
  }
  const waiting = new AbortController();
  try {
    const result = await Promise.race([
      // From the run the schedule started, through its continued-as-new runs, to the sync's result.
      client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).result() as Promise<PurchasesSyncResult>,
      sleep(Math.max(0, deadline - Date.now()), undefined, { signal: waiting.signal }).then(() => {
        throw timedOut();
      }),
    ]);
    return { businessId, scheduleId, workflowId: run.workflowId, result };
  } finally {
    waiting.abort();
  }
}
