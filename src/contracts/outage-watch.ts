/** Sales that met an outage wait on their application's watch: one probes, and once through all go, oldest first. */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const OUTAGE_WATCH_WORKFLOW_TYPE = 'outageWatchWorkflow';

export type OutageSide = 'service' | 'authority';

/** A window's own queue names the application; the fleet's shared queue needs the fairness key too. */
export function outageWatchWorkflowId(complianceQueue: string, fairnessKey: string): string {
  return complianceQueue.endsWith('.compliance-api')
    ? `outage-watch:${complianceQueue}:${fairnessKey}`
    : `outage-watch:${complianceQueue}`;
}

export interface WaitingSale {
  workflowId: string;
  side: OutageSide;
  /** The sale's start (epoch ms): the older goes first. */
  order: number;
  /** The priority key of its calls (a till's sale before bulk work). */
  priority: number;
  /** For the metrics. */
  application?: string;
}

/** The schema of what a watch carries to its next run; how it may change: docs/outages.md, "What a watch carries". */
export const OUTAGE_WATCH_CARRY_SCHEMA = 1;

/** A sale carried to the next run: when it joined and how often it probed, so its turn and the pacing go on. */
export interface CarriedWaitingSale extends WaitingSale {
  /** Workflow time (epoch ms); absent: the next run's start. */
  joinedAt?: number;
  /** Absent: 0. */
  probes?: number;
}

/** Empty when a sale starts the watch; what the previous run carried when it continued as new. */
export interface OutageWatchInput {
  /** Absent: 1. */
  schema?: number;
  /** Sales waiting when the watch continued as new. */
  waiting?: CarriedWaitingSale[];
  application?: string;
}

/** A sale joins (again, harmlessly), or tells what its try found: `back` when the side answered. */
export const waitOutOutageSignal = defineSignal<[WaitingSale]>('waitOutOutage');
export const outageTriedSignal = defineSignal<[{ workflowId: string; side: OutageSide; back: boolean }]>('outageTried');
/** A sale leaves without having got through (cancelled, or parked past its outage limit). */
export const leaveOutageSignal = defineSignal<[{ workflowId: string }]>('leaveOutage');

/** To a waiting sale: `probe`, try once now and say what you found; `over`, go. */
export const outageNewsSignal = defineSignal<[{ side: OutageSide; news: 'probe' | 'over' }]>('outageNews');

export interface OutageWatchState {
  waiting: Record<OutageSide, number>;
  /** When the oldest waiting sale of each side joined. */
  since: Record<OutageSide, string | null>;
  probes: number;
  released: number;
}

export const getOutageWatchStateQuery = defineQuery<OutageWatchState>('getState');

/** What a watch keeps in its memo, so one visibility listing tells the sales waiting per application. */
export interface OutageWatchMemo {
  application: string;
  waiting: Record<OutageSide, number>;
}
