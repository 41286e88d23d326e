/** The rate windows a fleet spends, one per service application, each held to its budget on the compliance queues. */
import type { Client } from '@temporalio/client';
import { complianceTaskQueue, windowComplianceTaskQueue } from '../contracts/task-queues.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { applyComplianceBudgets, applyQueueRate, planComplianceBudgets } from '../temporal/compliance-budgets.js';
import type { ComplianceApplication, TenantDirectory } from './directory.js';
import { errorText } from './probes.js';

export interface BudgetWindow {
  /** The service's application id, else the entry's name. */
  fairnessKey: string;
  applications: readonly string[];
  /** The lowest budget of the entries sharing it. */
  requestsPerMinute: number;
  businesses: readonly string[];
  /** Several businesses share a queue of its own fairly, its rate holding the window to its budget. */
  ownQueue: boolean;
}

export function windowKeyOf(application: ComplianceApplication): string {
  return application.serviceApplicationId ?? application.application;
}

export function budgetWindows(directory: Pick<TenantDirectory, 'applications'>): BudgetWindow[] {
  return [...Map.groupBy(directory.applications(), windowKeyOf)].map(([fairnessKey, sharing]) => {
    const businesses = sharing.flatMap((application) => application.businesses);
    return {
      fairnessKey,
      applications: sharing.map((application) => application.application),
      requestsPerMinute: Math.min(...sharing.map((application) => application.requestsPerMinute)),
      businesses,
      ownQueue: businesses.length > 1,
    };
  });
}

/** Allowed (business-bound keys of one application are normal), but budgets over the limit draw 429s when busy. */
export function warnSharedWindows(applications: readonly ComplianceApplication[], logger: Logger | undefined): void {
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
  directory: TenantDirectory;
  headroom: number;
  metrics: MetricsRecorder;
  logger: Logger;
}) {
  const { directory, metrics } = options;
  const windows = budgetWindows(directory);
  // Activity starts per second, less the headroom (COMPLIANCE_RATE_HEADROOM); no budget: one application's 120.
  const perSecond = (requestsPerMinute: number) => ((requestsPerMinute || 120) * (1 - options.headroom)) / 60;
  const onSharedQueue = windows.filter((window) => !window.ownQueue);
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

function round(value: number): number {
  return Number(value.toFixed(3));
}
