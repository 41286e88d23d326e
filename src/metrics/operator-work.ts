// Counted from Temporal's visibility, so the level survives a restart and every process of a fleet agrees.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { SALE_WORKFLOW_TYPE } from '../contracts/sale.js';
import { OPERATOR_WORKFLOW_TYPES, OUTAGE_SIDES } from './catalogue.js';
import type { MetricsRecorder } from './recorder.js';

const OPERATOR_WORK_INTERVAL_MS = 60_000;
const ATTENTION = 'NeedsAttention = true';

/** One visibility count and where its number goes. */
interface Level {
  query: string;
  publish(count: number): void;
  /** Logged with a failure, to say which count it was. */
  about: { metric: string } & Record<string, string>;
}

/**
 * The fleet's levels: workflows waiting for an operator, by type, and sales waiting out an outage by themselves, by
 * side. Per fleet only: visibility groups a count by `ExecutionStatus` alone, so a count per `Application` would be
 * one query per application and side, every interval, from every process of the fleet.
 */
function levels(queue: string, metrics: MetricsRecorder): Level[] {
  const running = (workflowType: string) =>
    `WorkflowType = '${workflowType}' AND TaskQueue = '${queue}' AND ExecutionStatus = 'Running'`;
  return [
    ...OPERATOR_WORKFLOW_TYPES.map((workflowType) => ({
      query: `${running(workflowType)} AND ${ATTENTION}`,
      publish: (count: number) => metrics.set('etims_operator_work_waiting', count, { workflow_type: workflowType }),
      about: { metric: 'etims_operator_work_waiting', workflowType },
    })),
    // The statuses the sale writes while it waits; a sale its outageLimit parked needs an operator instead, and is
    // counted above whatever its status still says.
    ...OUTAGE_SIDES.map((side) => ({
      query: `${running(SALE_WORKFLOW_TYPE)} AND FiscalStatus = 'awaiting_${side}' AND NeedsAttention = false`,
      publish: (count: number) => metrics.set('etims_sales_awaiting_outage', count, { side }),
      about: { metric: 'etims_sales_awaiting_outage', side },
    })),
  ];
}

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
  const counted = levels(queue, metrics);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const countAll = async () => {
    for (const level of counted) {
      try {
        const { count } = await client.workflow.count(level.query);
        if (!stopped) level.publish(count);
      } catch (err) {
        logger.warn(
          { err: { message: (err as Error).message }, ...level.about },
          'a level not counted from visibility; its metric keeps its last value',
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
