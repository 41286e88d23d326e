// Why: docs/tenancy.md, "Each application held to its own budget, fleet-wide".
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

export interface BudgetWindow {
  /** The service's application id, else the entry's name. */
  fairnessKey: string;
  applications: readonly string[];
  /** The lowest budget of the entries sharing it. */
  requestsPerMinute: number;
  businesses: readonly string[];
  /**
   * Several businesses share a queue of its own fairly, its rate holding the window to its budget (the first
   * WINDOW_QUEUES_MAX such windows; the others share the shared queue first come, first served, keyed by the window).
   */
  ownQueue: boolean;
}

const ACTIVITY = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;
const MAX_WEIGHT_OVERRIDES = 1_000;

/** The shared queue's configuration for the windows without a queue of their own. */
export function planComplianceBudgets(
  windows: readonly BudgetWindow[],
  perSecond: (requestsPerMinute: number) => number,
) {
  const rates = windows.map((window) => ({ key: window.fairnessKey, rate: perSecond(window.requestsPerMinute) }));
  const byRate = new Map<number, number>();
  for (const { rate } of rates) byRate.set(rate, (byRate.get(rate) ?? 0) + 1);
  // The most common rate (ties: the lower) is the default; no window: one application's 120 a minute.
  const defaultPerSecond = [...byRate].sort(([ra, na], [rb, nb]) => nb - na || ra - rb)[0]?.[0] ?? perSecond(120);
  const weights: Record<string, number> = {};
  for (const { key, rate } of rates) if (rate !== defaultPerSecond) weights[key] = rate / defaultPerSecond;
  return {
    defaultPerSecond,
    weights,
    queuePerSecond: Math.max(
      defaultPerSecond,
      rates.reduce((sum, { rate }) => sum + rate, 0),
    ),
  };
}

export async function readComplianceBudgets(client: Client, taskQueue: string) {
  const { config } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: ACTIVITY,
    reportConfig: true,
  });
  return {
    queuePerSecond: config?.queueRateLimit?.rateLimit?.requestsPerSecond ?? undefined,
    defaultPerSecond: config?.fairnessKeysRateLimitDefault?.rateLimit?.requestsPerSecond ?? undefined,
    weights: Object.fromEntries(
      Object.entries(config?.fairnessWeightOverrides ?? {}).map(([key, weight]) => [key, Number(weight)]),
    ),
  };
}

function updateQueue(
  client: Client,
  taskQueue: string,
  update: Partial<proto.temporal.api.workflowservice.v1.IUpdateTaskQueueConfigRequest>,
) {
  return client.workflowService.updateTaskQueueConfig({
    namespace: client.options.namespace,
    identity: client.options.identity ?? 'etims-worker',
    taskQueue,
    taskQueueType: ACTIVITY,
    ...update,
  });
}

/** Also unsets the weights of keys no longer in the plan. Applying the same plan again changes nothing. */
export async function applyComplianceBudgets(
  client: Client,
  taskQueue: string,
  plan: ReturnType<typeof planComplianceBudgets>,
  reason: string,
): Promise<void> {
  const applied = await readComplianceBudgets(client, taskQueue);
  const stale = Object.keys(applied.weights).filter((key) => !(key in plan.weights));
  const keys = Object.keys(plan.weights);
  if (keys.length > MAX_WEIGHT_OVERRIDES) {
    throw new Error(
      `${keys.length} rate windows have a budget other than the most common one; ` +
        `the server keeps weights for ${MAX_WEIGHT_OVERRIDES} at most`,
    );
  }
  // In slices of a hundred, so no one request carries a thousand changes.
  const SLICE = 100;
  for (let i = 0; i < Math.max(keys.length, stale.length, 1); i += SLICE) {
    await updateQueue(client, taskQueue, {
      ...(i === 0
        ? {
            updateQueueRateLimit: { rateLimit: { requestsPerSecond: plan.queuePerSecond }, reason },
            updateFairnessKeyRateLimitDefault: { rateLimit: { requestsPerSecond: plan.defaultPerSecond }, reason },
          }
        : {}),
      setFairnessWeightOverrides: Object.fromEntries(keys.slice(i, i + SLICE).map((key) => [key, plan.weights[key]!])),
      unsetFairnessWeightOverrides: stale.slice(i, i + SLICE),
    });
  }
}

/** A window's own queue: its rate is the window's budget; its businesses' keys are dispatched in turn. */
export async function applyQueueRate(client: Client, taskQueue: string, perSecond: number, reason: string) {
  await updateQueue(client, taskQueue, {
    updateQueueRateLimit: { rateLimit: { requestsPerSecond: perSecond }, reason },
  });
}
