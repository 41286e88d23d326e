/** Signal-with-start of an application's outage watch: every sale that meets the outage reaches the one. */
import {
  OUTAGE_WATCH_WORKFLOW_TYPE,
  outageWatchWorkflowId,
  waitOutOutageSignal,
  type WaitingSale,
} from '../src/contracts/outage-watch.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';

interface JoinOutageWatchInput extends WaitingSale {
  /** The sale's business, for the logs. */
  businessId: string;
  /** The queue and fairness key of the application's compliance calls: they name its watch. */
  complianceQueue: string;
  fairnessKey: string;
  /** The sale's own task queue: the watch runs beside it. */
  taskQueue: string;
}

export function createOutageWatchActivities(
  deps: Pick<ActivityDeps, 'temporal' | 'logger' | 'outages'> & Partial<Pick<ActivityDeps, 'services'>>,
) {
  return {
    async joinOutageWatch(input: JoinOutageWatchInput): Promise<{ watchWorkflowId: string }> {
      const { complianceQueue, fairnessKey, taskQueue, businessId, ...sale } = input;
      const workflowId = outageWatchWorkflowId(complianceQueue, fairnessKey);
      // Named for the metrics only: a business no application serves any more still waits, unnamed.
      const application = deps.services?.place(businessId, { newWork: false }).application ?? undefined;
      await temporalClientOf(deps, 'joinOutageWatch').workflow.signalWithStart(OUTAGE_WATCH_WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        args: [{}],
        signal: waitOutOutageSignal,
        signalArgs: [{ ...sale, ...(application ? { application } : {}) }],
      });
      // This process's calls to the application now ask the watch what is down before they are sent.
      deps.outages?.observe(complianceQueue, fairnessKey, 'joined');
      deps.logger.debug({ workflowId, businessId, sale: sale.workflowId, side: sale.side }, 'sale waits out an outage');
      return { watchWorkflowId: workflowId };
    },
  };
}
