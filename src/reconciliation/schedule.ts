// One Temporal Schedule per linked business, created or brought up to date at worker start-up.
import {
  ScheduleAlreadyRunning,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleSpec,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { DEFAULT_RECONCILIATION_INTERVAL, type ReconciliationLink } from '../config/reconciliation.js';
import {
  RECONCILIATION_WORKFLOW_TYPE,
  reconciliationScheduleId,
  type ReconcileBusinessResult,
  type ReconciliationInput,
} from '../contracts/reconciliation.js';

// Why: docs/reconciliation.md, "Scheduled".
const POLICIES = { overlap: 'SKIP', catchupWindow: '1 day' } as const;

export interface EnsuredSchedule {
  scheduleId: string;
  businessId: string;
  companyId: string;
  outcome: 'created' | 'updated';
}

export async function ensureReconciliationSchedules(
  client: Client,
  options: {
    links: readonly ReconciliationLink[];
    taskQueue: string;
    /** Default '24h', counted from the Unix epoch: 03:00 in Nairobi. */
    interval?: Duration;
    /** Separates deployments sharing a namespace (default 'reconciliation'). */
    idPrefix?: string;
    /** Days each run reconciles (RECONCILE_PERIOD_DAYS); absent, the workflow's default. */
    periodDays?: number;
  },
): Promise<EnsuredSchedule[]> {
  const spec: ScheduleSpec = { intervals: [{ every: options.interval ?? DEFAULT_RECONCILIATION_INTERVAL }] };
  const ensured: EnsuredSchedule[] = [];
  for (const { businessId, companyId } of options.links) {
    const scheduleId = reconciliationScheduleId(businessId, options.idPrefix);
    const action: ScheduleOptionsStartWorkflowAction<(input: ReconciliationInput) => Promise<ReconcileBusinessResult>> =
      {
        type: 'startWorkflow',
        workflowType: RECONCILIATION_WORKFLOW_TYPE,
        taskQueue: options.taskQueue,
        // The schedule appends the scheduled time, so each run has its own id under this one.
        workflowId: scheduleId,
        args: [
          {
            businessId,
            companyId,
            ...(options.periodDays === undefined ? {} : { options: { periodDays: options.periodDays } }),
          },
        ],
        staticSummary: `Reconciliation of ${businessId} with ${companyId}`,
      };
    try {
      await client.schedule.create({ scheduleId, spec, action, policies: POLICIES });
      ensured.push({ scheduleId, businessId, companyId, outcome: 'created' });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      // An operator's pause (and its note) survives a restart; everything the configuration says is replaced.
      await client.schedule.getHandle(scheduleId).update((previous) => ({
        spec,
        action,
        policies: POLICIES,
        state: {
          paused: previous.state.paused,
          ...(previous.state.note === undefined ? {} : { note: previous.state.note }),
        },
      }));
      ensured.push({ scheduleId, businessId, companyId, outcome: 'updated' });
    }
  }
  return ensured;
}
