// Counted from Temporal's visibility, so the level survives a restart and every process of a fleet agrees.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { OPERATOR_WORKFLOW_TYPES } from './catalogue.js';
import type { MetricsRecorder } from './recorder.js';

const OPERATOR_WORK_INTERVAL_MS = 60_000;
const ATTENTION = 'NeedsAttention = true';

/** Counts now, then every `intervalMs`, until stopped. A failed count keeps the last value. */
export function watchOperatorWork(options: {
  client: Client;
  taskQueue: string;
  metrics: MetricsRecorder;
  logger: Logger;
  intervalMs?: number;
}): () => void {
  const { client, taskQueue, metrics, logger } = options;
  const queue = taskQueue.replaceAll("'", "\\'");
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const countAll = async () => {
    for (const workflowType of OPERATOR_WORKFLOW_TYPES) {
      try {
        const { count } = await client.workflow.count(
          `WorkflowType = '${workflowType}' AND TaskQueue = '${queue}' AND ExecutionStatus = 'Running' AND ` +
            ATTENTION,
        );
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
