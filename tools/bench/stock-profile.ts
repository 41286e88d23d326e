/**
 * Where a ledger's time went, from its histories (every run of it, continue-as-new included): how long its workflow
 * tasks waited and ran, how long its movements waited in the compliance queue, and how many were not started before
 * their coalescing deadline (a ScheduleToStart timeout, re-issued at till priority). When a line's lag is far above
 * the max delay, this says whether the ledger itself or the queue held it.
 */
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { percentile } from './stats.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const WorkflowTaskFailedCause = proto.temporal.api.enums.v1.WorkflowTaskFailedCause;

/** The few facts of a history event the profile reads. */
export interface LedgerEvent {
  id: number;
  type: string;
  at: number;
  /** For a task's started / completed / timed-out event: the event that scheduled it. */
  scheduledId?: number;
  /** A failed workflow task: its cause and message (a ledger whose tasks fail is retried about every 10 s). */
  failure?: string;
}

export function toLedgerEvents(events: readonly temporal.api.history.v1.IHistoryEvent[]): LedgerEvent[] {
  return events.map((e) => {
    const t = e.eventTime;
    const scheduledId =
      e.workflowTaskStartedEventAttributes?.scheduledEventId ??
      e.workflowTaskCompletedEventAttributes?.scheduledEventId ??
      e.activityTaskStartedEventAttributes?.scheduledEventId ??
      e.activityTaskCompletedEventAttributes?.scheduledEventId ??
      e.activityTaskFailedEventAttributes?.scheduledEventId ??
      e.activityTaskTimedOutEventAttributes?.scheduledEventId;
    const failed = e.workflowTaskFailedEventAttributes;
    const cause = failed
      ? (WorkflowTaskFailedCause[failed.cause ?? 0] ?? 'UNKNOWN').replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '')
      : undefined;
    return {
      id: Number(e.eventId),
      type: (EventType[e.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, ''),
      at: t ? Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6 : Number.NaN,
      ...(scheduledId === undefined || scheduledId === null ? {} : { scheduledId: Number(scheduledId) }),
      ...(failed ? { failure: `${cause}: ${(failed.failure?.message ?? '').slice(0, 300)}` } : {}),
    };
  });
}

export interface Spread {
  n: number;
  p50: number;
  p90: number;
  max: number;
}

function spread(values: readonly number[]): Spread {
  return {
    n: values.length,
    p50: Math.round(percentile(values, 50)),
    p90: Math.round(percentile(values, 90)),
    max: values.length ? Math.round(Math.max(...values)) : Number.NaN,
  };
}

export interface LedgerProfile {
  runs: number;
  events: number;
  handOvers: number;
  /** Workflow tasks: scheduled → started, started → completed (ms). */
  workflowTaskWaitMs: Spread;
  workflowTaskRunMs: Spread;
  /** Movements and probes: scheduled → started (ms), for those that started. */
  movementWaitMs: Spread;
  movements: number;
  /** Not started before their deadline (ScheduleToStart), then re-issued at till priority. */
  notStartedInTime: number;
  /** Timed out after they started (the worker killed under them): uncertain. */
  timedOutRunning: number;
  /** Workflow tasks that failed or timed out, and the distinct failures (cause: message) with how often each. */
  workflowTaskFailures: number;
  failures: Record<string, number>;
}

/** The profile over the histories of every run of a ledger (each in its own array). */
export function ledgerProfile(runs: ReadonlyArray<readonly LedgerEvent[]>): LedgerProfile {
  const taskWait: number[] = [];
  const taskRun: number[] = [];
  const movementWait: number[] = [];
  let movements = 0;
  let notStartedInTime = 0;
  let timedOutRunning = 0;
  let handOvers = 0;
  let workflowTaskFailures = 0;
  const failures: Record<string, number> = {};
  for (const events of runs) {
    const byId = new Map(events.map((e) => [e.id, e]));
    const started = new Set<number>();
    /** A workflow task's started event, by the id of the event that scheduled it. */
    const taskStarted = new Map<number, LedgerEvent>();
    for (const e of events) {
      const scheduled = e.scheduledId === undefined ? undefined : byId.get(e.scheduledId);
      if (e.type === 'WORKFLOW_EXECUTION_SIGNALED') handOvers++;
      else if (e.type === 'WORKFLOW_TASK_FAILED' || e.type === 'WORKFLOW_TASK_TIMED_OUT') {
        workflowTaskFailures++;
        const what = e.failure ?? 'timed out';
        failures[what] = (failures[what] ?? 0) + 1;
      } else if (e.type === 'WORKFLOW_TASK_STARTED' && scheduled) {
        taskStarted.set(scheduled.id, e);
        taskWait.push(e.at - scheduled.at);
      } else if (e.type === 'WORKFLOW_TASK_COMPLETED' && e.scheduledId !== undefined) {
        const startedEvent = taskStarted.get(e.scheduledId);
        if (startedEvent) taskRun.push(e.at - startedEvent.at);
      } else if (e.type === 'ACTIVITY_TASK_SCHEDULED') movements++;
      else if (e.type === 'ACTIVITY_TASK_STARTED' && scheduled) {
        started.add(scheduled.id);
        movementWait.push(e.at - scheduled.at);
      } else if (e.type === 'ACTIVITY_TASK_TIMED_OUT' && e.scheduledId !== undefined) {
        if (started.has(e.scheduledId)) timedOutRunning++;
        else notStartedInTime++;
      }
    }
  }
  return {
    runs: runs.length,
    events: runs.reduce((sum, r) => sum + r.length, 0),
    handOvers,
    workflowTaskWaitMs: spread(taskWait),
    workflowTaskRunMs: spread(taskRun),
    movementWaitMs: spread(movementWait),
    movements,
    notStartedInTime,
    timedOutRunning,
    workflowTaskFailures,
    failures,
  };
}
