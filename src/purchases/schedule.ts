// Made sure of at start-up: restarting any number of workers never makes a second schedule; a paused one stays so.
import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import type { Logger } from 'pino';
import { parseDuration } from '../contracts/duration.js';
import { BusinessId } from '../contracts/search-attributes.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import {
  PURCHASES_SYNC_WORKFLOW_TYPE,
  purchasesScheduleId,
  type PurchasesSyncInput,
  type PurchasesSyncOptions,
} from '../contracts/purchases-sync.js';
import { DEFAULT_PURCHASES_SYNC_INTERVAL_MS } from '../config/purchases.js';

/** Each sync lists everything, and two syncs of one business at once would deliver the same events twice. */
const OVERLAP = ScheduleOverlapPolicy.SKIP;
/** One missed tick is still run (a full sync catches up on everything); the SDK's default is one year. */
export const PURCHASES_CATCHUP_WINDOW_MS = 3_600_000;

interface PurchasesScheduleSettings {
  businessIds: readonly string[];
  /** Ms, or a duration with its unit ('15m'). Default 15 minutes. */
  interval?: number | string;
  taskQueue?: string;
  options?: PurchasesSyncOptions;
  /** Run a new schedule's first sync now rather than one interval later (default true). */
  triggerImmediately?: boolean;
  logger?: Logger;
}

export interface EnsuredSchedule {
  businessId: string;
  scheduleId: string;
  outcome: 'created' | 'updated' | 'unchanged';
}

type SyncAction = ScheduleOptionsStartWorkflowAction<(input: PurchasesSyncInput) => Promise<unknown>>;

function intervalMs(interval: number | string | undefined): number {
  if (interval === undefined) return DEFAULT_PURCHASES_SYNC_INTERVAL_MS;
  const ms = typeof interval === 'number' ? interval : parseDuration(interval);
  // The schedule rounds to whole seconds; under ten is not a sync interval.
  if (ms === undefined || !Number.isFinite(ms) || ms < 10_000)
    throw new Error(`purchases sync interval must be at least 10 seconds (got ${String(interval)})`);
  return Math.round(ms / 1000) * 1000;
}

function differences(current: ScheduleDescription, wanted: { everyMs: number; action: SyncAction }): string[] {
  const found: string[] = [];
  const { intervals = [], calendars } = current.spec;
  if (intervals.length !== 1 || intervals[0]?.every !== wanted.everyMs || (calendars?.length ?? 0) > 0)
    found.push('interval');
  const act = current.action;
  if (
    act.type !== 'startWorkflow' ||
    act.workflowType !== PURCHASES_SYNC_WORKFLOW_TYPE ||
    act.workflowId !== wanted.action.workflowId
  )
    found.push('workflow');
  else {
    if (act.taskQueue !== wanted.action.taskQueue) found.push('taskQueue');
    if (JSON.stringify(act.args) !== JSON.stringify(wanted.action.args)) found.push('args');
  }
  if (current.policies.overlap !== OVERLAP || current.policies.catchupWindow !== PURCHASES_CATCHUP_WINDOW_MS)
    found.push('policies');
  return found;
}

async function ensureOne(
  client: Client,
  businessId: string,
  settings: PurchasesScheduleSettings,
  everyMs: number,
): Promise<EnsuredSchedule> {
  const taskQueue = settings.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const scheduleId = purchasesScheduleId(businessId, taskQueue);
  const { options } = settings;
  const action: SyncAction = {
    type: 'startWorkflow',
    workflowType: PURCHASES_SYNC_WORKFLOW_TYPE,
    // The server appends the scheduled time: purchases-sync:<business>-2026-11-22T12:00:00Z.
    workflowId: scheduleId,
    taskQueue,
    args: [options === undefined || Object.keys(options).length === 0 ? { businessId } : { businessId, options }],
    typedSearchAttributes: [{ key: BusinessId, value: businessId }],
    staticSummary: `Purchases sync of ${businessId}`,
  };
  const policies = { overlap: OVERLAP, catchupWindow: PURCHASES_CATCHUP_WINDOW_MS, pauseOnFailure: false };
  try {
    const handle = await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: everyMs }] },
      action,
      policies,
      state: { note: 'made by the worker (PURCHASES_SINK, or the business takes stock in)' },
    });
    // Not `state.triggerImmediately`: the SDK starts that run under ALLOW_ALL, which gets and hands on no ledger.
    if (settings.triggerImmediately ?? true) await handle.trigger(ScheduleOverlapPolicy.SKIP);
    return { businessId, scheduleId, outcome: 'created' };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(scheduleId);
  const changed = differences(await handle.describe(), { everyMs, action });
  if (changed.length === 0) return { businessId, scheduleId, outcome: 'unchanged' };
  await handle.update((current) => ({
    ...current,
    spec: { intervals: [{ every: everyMs }] },
    action,
    policies: { ...current.policies, ...policies },
  }));
  settings.logger?.info({ scheduleId, changed }, 'purchases sync schedule updated');
  return { businessId, scheduleId, outcome: 'updated' };
}

/** Creates or updates the schedule of each business; one at a time, so start-up stays gentle on the frontend. */
export async function ensurePurchasesSyncSchedules(client: Client, settings: PurchasesScheduleSettings) {
  const everyMs = intervalMs(settings.interval);
  const results: EnsuredSchedule[] = [];
  for (const businessId of settings.businessIds) results.push(await ensureOne(client, businessId, settings, everyMs));
  return results;
}
