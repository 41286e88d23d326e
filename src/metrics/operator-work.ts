// Counted from Temporal's visibility, so the level survives a restart and every process of a fleet agrees.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { OUTAGE_WATCH_WORKFLOW_TYPE, type OutageWatchMemo } from '../contracts/outage-watch.js';
import { SALE_WORKFLOW_TYPE } from '../contracts/sale.js';
import { OPERATOR_WORKFLOW_TYPES, OUTAGE_SIDES } from './catalogue.js';
import type { MetricsRecorder } from './recorder.js';

const OPERATOR_WORK_INTERVAL_MS = 60_000;
const ATTENTION = 'NeedsAttention = true';

function running(workflowType: string, queue: string): string {
  return `WorkflowType = '${workflowType}' AND TaskQueue = '${queue}' AND ExecutionStatus = 'Running'`;
}

/** From the running outage watches' memos; an application whose watch closed is set back to 0. */
function applicationOutages(client: Client, queue: string, metrics: MetricsRecorder) {
  const shown = new Set<string>();
  return async (stopped: () => boolean) => {
    const now = new Map<string, OutageWatchMemo['waiting']>();
    for await (const watch of client.workflow.list({ query: running(OUTAGE_WATCH_WORKFLOW_TYPE, queue) })) {
      const memo = watch.memo as Partial<OutageWatchMemo> | undefined;
      if (typeof memo?.application !== 'string' || !memo.waiting) continue;
      const known = now.get(memo.application);
      now.set(memo.application, {
        service: (known?.service ?? 0) + (memo.waiting.service ?? 0),
        authority: (known?.authority ?? 0) + (memo.waiting.authority ?? 0),
      });
    }
    if (stopped()) return;
    for (const application of shown) if (!now.has(application)) now.set(application, { service: 0, authority: 0 });
    for (const [application, waiting] of now) {
      for (const side of OUTAGE_SIDES)
        metrics.set('etims_application_sales_awaiting_outage', waiting[side], { application, side });
      if (waiting.service + waiting.authority > 0) shown.add(application);
      else shown.delete(application);
    }
  };
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
  const countOutages = applicationOutages(client, queue, metrics);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const level = async (query: string, publish: (count: number) => void) => {
    const { count } = await client.workflow.count(query);
    if (!stopped) publish(count);
  };
  // Per fleet only: visibility groups a count by `ExecutionStatus` alone, so a count per `Application` would be one
  // query per application and side, every interval, from every process of the fleet.
  const counts = [
    ...OPERATOR_WORKFLOW_TYPES.map((workflowType) => ({
      about: { metric: 'etims_operator_work_waiting', workflowType },
      run: () =>
        level(`${running(workflowType, queue)} AND ${ATTENTION}`, (count) =>
          metrics.set('etims_operator_work_waiting', count, { workflow_type: workflowType }),
        ),
    })),
    // A sale its outageLimit parked needs an operator instead, and is counted above whatever its status still says.
    ...OUTAGE_SIDES.map((side) => ({
      about: { metric: 'etims_sales_awaiting_outage', side },
      run: () =>
        level(
          `${running(SALE_WORKFLOW_TYPE, queue)} AND FiscalStatus = 'awaiting_${side}' AND NeedsAttention = false`,
          (count) => metrics.set('etims_sales_awaiting_outage', count, { side }),
        ),
    })),
    { about: { metric: 'etims_application_sales_awaiting_outage' }, run: () => countOutages(() => stopped) },
  ];
  const countAll = async () => {
    for (const { about, run } of counts) {
      try {
        await run();
      } catch (err) {
        logger.warn(
          { err: { message: (err as Error).message }, ...about },
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
