/** Each rate window held to its budget on the compliance queues, at start and after every change of the tenants. */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { complianceTaskQueue, windowComplianceTaskQueue } from '../contracts/task-queues.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { budgetWindows } from './budget-windows.js';
import { errorText } from './probes.js';
import type { TenantDirectory } from './directory.js';
import {
  applyComplianceBudgets,
  applyQueueRate,
  planComplianceBudgets,
  type ComplianceBudgetPlan,
} from '../temporal/compliance-budgets.js';

export async function holdTenantBudgets(options: {
  client: Client;
  taskQueue: string;
  directory: TenantDirectory;
  headroom: number;
  metrics: MetricsRecorder;
  logger: Logger;
}): Promise<{ shared: ComplianceBudgetPlan; own: Array<{ taskQueue: string; perSecond: number; window: string }> }> {
  const { directory, metrics } = options;
  const windows = budgetWindows(directory);
  // Activity starts per second, less the headroom (COMPLIANCE_RATE_HEADROOM); no budget: one application's 120.
  const perSecond = (requestsPerMinute: number) => ((requestsPerMinute || 120) * (1 - options.headroom)) / 60;
  const shared = planComplianceBudgets(
    windows.filter((window) => !window.ownQueue),
    perSecond,
  );
  const own = windows
    .filter((window) => window.ownQueue)
    .map((window) => ({
      taskQueue: windowComplianceTaskQueue(options.taskQueue, window.fairnessKey),
      perSecond: perSecond(window.requestsPerMinute),
      window: window.fairnessKey,
    }));
  const queue = complianceTaskQueue(options.taskQueue);
  const reason = `tenants of ${directory.origin}`;
  metrics.knowApplications(directory.applications().map((a) => a.application));
  for (const window of windows) {
    for (const application of window.applications)
      metrics.set('etims_application_budget_per_second', perSecond(window.requestsPerMinute), { application });
  }
  metrics.set(
    'etims_compliance_rate_budget_per_second',
    shared.queuePerSecond + own.reduce((sum, q) => sum + q.perSecond, 0),
    {},
  );
  try {
    await applyComplianceBudgets(options.client, queue, shared, reason);
    for (const q of own) await applyQueueRate(options.client, q.taskQueue, q.perSecond, reason);
  } catch (err) {
    // A server before 1.29, or an identity not allowed to configure queues: each queue is still paced as a whole
    // and each client follows its own window, but nothing holds one application to its budget across processes.
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
