/**
 * `etims_operator_work_waiting`: how many running workflows of this task queue wait for an operator, counted from
 * Temporal's visibility (`NeedsAttention = true`) once a minute, so the level survives a worker restart and every
 * process of a fleet publishes the same number (dashboards and alerts take the `max`).
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { OPERATOR_WORKFLOW_TYPES } from './catalogue.js';
import type { MetricsRecorder } from './recorder.js';

export const OPERATOR_WORK_INTERVAL_MS = 60_000;

export function operatorWorkQuery(workflowType: string, taskQueue: string): string {
  return `WorkflowType = '${workflowType}' AND TaskQueue = '${taskQueue.replaceAll("'", "\\'")}' AND ExecutionStatus = 'Running' AND NeedsAttention = true`;
}

/** Counts now, then every `intervalMs`, until the returned stop is called. A failed count keeps the last value and is logged. */
export function watchOperatorWork(options: {
  client: Client;
  taskQueue: string;
  metrics: MetricsRecorder;
  logger: Logger;
  intervalMs?: number;
}): () => void {
  const { client, taskQueue, metrics, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const countAll = async () => {
    for (const workflowType of OPERATOR_WORKFLOW_TYPES) {
      try {
        const { count } = await client.workflow.count(operatorWorkQuery(workflowType, taskQueue));
        if (!stopped) metrics.set('etims_operator_work_waiting', count, { workflow_type: workflowType });
      } catch (err) {
        logger.warn(
          { err: { message: (err as Error).message }, workflowType },
          'operator work not counted; the metric keeps its last value',
        );
      }
    }
    if (!stopped) timer = setTimeout(() => void countAll(), options.intervalMs ?? OPERATOR_WORK_INTERVAL_MS).unref();
  };
  void countAll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
