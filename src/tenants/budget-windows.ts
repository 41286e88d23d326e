/** The rate windows a fleet spends, one per service application, each held to its budget on the compliance queues. */
import type { Client } from '@temporalio/client';
import { complianceTaskQueue, windowComplianceTaskQueue } from '../contracts/task-queues.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import {
  applyComplianceBudgets,
  applyQueueRate,
  planComplianceBudgets,
  type BudgetWindow,
} from '../temporal/compliance-budgets.js';

export type { BudgetWindow };
import { errorText } from './probes.js';
import type { TenantsConfig } from './types.js';

/** What a window needs of a resolved compliance entry (the directory's `ComplianceApplication`). */
export interface WindowedApplication {
  application: string;
  serviceApplicationId?: string | undefined;
  serviceRequestsPerMinute?: number | undefined;
  requestsPerMinute: number;
  businesses: readonly string[];
}

export function windowKeyOf(application: WindowedApplication): string {
  return application.serviceApplicationId ?? application.application;
}

/**
 * Windows of several businesses given a compliance queue of their own, the first in the tenants' order. Every queue a
 * versioned worker polls is registered in its Worker Deployment Version, and the server holds at most
 * `matching.maxTaskQueuesInDeploymentVersion` (100 by default): the workflow queue, the shared compliance queue, the
 * accounting queue and these 40 make 43 however many applications the fleet serves. A window past them shares the
 * shared compliance queue, keyed and held to its budget like a window of one business (docs/tenancy.md).
 */
export const WINDOW_QUEUES_MAX = 40;

export function budgetWindows(
  directory: { applications(): readonly WindowedApplication[] },
  windowQueuesMax = WINDOW_QUEUES_MAX,
): BudgetWindow[] {
  let ownQueues = 0;
  return [...Map.groupBy(directory.applications(), windowKeyOf)].map(([fairnessKey, sharing]) => {
    const businesses = sharing.flatMap((application) => application.businesses);
    const ownQueue = businesses.length > 1 && ownQueues < windowQueuesMax;
    if (ownQueue) ownQueues++;
    return {
      fairnessKey,
      applications: sharing.map((application) => application.application),
      requestsPerMinute: Math.min(...sharing.map((application) => application.requestsPerMinute)),
      businesses,
      ownQueue,
    };
  });
}

/** Allowed (business-bound keys of one application are normal), but budgets over the limit draw 429s when busy. */
export function warnSharedWindows(applications: readonly WindowedApplication[], logger: Logger | undefined): void {
  const identified = applications.filter((application) => application.serviceApplicationId !== undefined);
  for (const [serviceApplicationId, sharing] of Map.groupBy(identified, (a) => a.serviceApplicationId!)) {
    const total = sharing.reduce((sum, application) => sum + application.requestsPerMinute, 0);
    const limit = sharing[0]!.serviceRequestsPerMinute;
    if (sharing.length > 1 && limit !== undefined && total > limit) {
      logger?.warn(
        {
          serviceApplicationId,
          applications: sharing.map((a) => a.application),
          requestsPerMinute: total,
          serviceRequestsPerMinute: limit,
        },
        'entries share one service application, and their budgets add up to more than its limit',
      );
    }
  }
}

/** At start and after every change of the tenants. */
export async function holdTenantBudgets(options: {
  client: Client;
  taskQueue: string;
  directory: { applications(): readonly WindowedApplication[]; origin: string };
  headroom: number;
  metrics: MetricsRecorder;
  logger: Logger;
}) {
  const { directory, metrics } = options;
  const windows = budgetWindows(directory);
  // Activity starts per second, less the headroom (COMPLIANCE_RATE_HEADROOM); no budget: one application's 120.
  const perSecond = (requestsPerMinute: number) => ((requestsPerMinute || 120) * (1 - options.headroom)) / 60;
  const onSharedQueue = windows.filter((window) => !window.ownQueue);
  const sharing = onSharedQueue.filter((window) => window.businesses.length > 1);
  if (sharing.length > 0)
    options.logger.warn(
      { windows: sharing.map((window) => window.fairnessKey).slice(0, 20), count: sharing.length },
      `${sharing.length} window(s) of several businesses past the first ${WINDOW_QUEUES_MAX} share the shared ` +
        'compliance queue, each held to its budget but its businesses served first come, first served (a queue of ' +
        'its own each would pass the task queues a deployment version may hold: docs/tenancy.md)',
    );
  const shared = planComplianceBudgets(onSharedQueue, perSecond);
  const own = windows
    .filter((window) => window.ownQueue)
    .map((window) => ({
      taskQueue: windowComplianceTaskQueue(options.taskQueue, window.fairnessKey),
      perSecond: perSecond(window.requestsPerMinute),
      window: window.fairnessKey,
      businesses: window.businesses,
    }));
  const queue = complianceTaskQueue(options.taskQueue);
  const reason = `tenants of ${directory.origin}`;
  metrics.knowApplications(directory.applications().map((a) => a.application));
  for (const window of windows) {
    for (const application of window.applications)
      metrics.set('etims_application_budget_per_second', perSecond(window.requestsPerMinute), { application });
  }
  const budget = shared.queuePerSecond + own.reduce((sum, q) => sum + q.perSecond, 0);
  metrics.set('etims_compliance_rate_budget_per_second', budget, {});
  try {
    await applyComplianceBudgets(options.client, queue, shared, reason);
    for (const q of own) await applyQueueRate(options.client, q.taskQueue, q.perSecond, reason);
  } catch (err) {
    // A server before 1.29, or an identity not allowed to configure queues: each process paces on its own.
    options.logger.error(
      { taskQueue: queue, err: errorText(err) },
      'the Temporal server did not take the per-application budgets (UpdateTaskQueueConfig): ' +
        'each application is held by its own rate-limit gate only, per process',
    );
    return { shared, own };
  }
  options.logger.info(
    {
      taskQueue: queue,
      windows: windows.length,
      defaultPerSecond: round(shared.defaultPerSecond),
      weighted: Object.keys(shared.weights).length,
      queuePerSecond: round(shared.queuePerSecond),
      ownQueues: own.map((q) => `${q.taskQueue} ${round(q.perSecond)}/s`),
    },
    'each application held to its budget on the compliance queues',
  );
  return { shared, own };
}

/** Starts per second of the keys not answered yet: the workers' rate, set once at creation, must leave them room. */
export function awaitedPerSecond(
  tenants: TenantsConfig,
  directory: { awaited(): ReadonlyArray<{ source: string }> },
  headroom: number,
): number {
  const awaited = new Set(directory.awaited().map((entry) => entry.source));
  return tenants.compliance
    .filter((tenant) => awaited.has(tenant.source))
    .reduce((sum, tenant) => sum + (tenant.requestsPerMinute * (1 - headroom)) / 60, 0);
}

function round(value: number): number {
  return Number(value.toFixed(3));
}
