// While an application's outage watch holds sales waiting, its other calls are not sent: a known outage spends none
// of the budget. Every process reads the watch, cached for a few seconds, so the fleet holds back together.
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { ApiError } from '../src/http/errors.js';
import {
  getOutageWatchStateQuery,
  outageWatchWorkflowId,
  type OutageSide,
  type OutageWatchState,
} from '../src/contracts/outage-watch.js';

const READ_EVERY_MS = 5_000;
/** Held this long after a call met an outage: a burst of sales spends one request before the first joins the watch. */
const SUSPECT_MS = 15_000;
/** The watch is read only by a process that met an outage of the application this recently. */
const CONSULT_AFTER_OUTAGE_MS = 600_000;
/** Calls failing in a row, with no answer between, before the process suspects an outage: a stray 503 is not one. */
const SUSPECT_AFTER = 2;
/** What the authority alone refuses while it is down: reads, items and stock still go through. */
const SUBMISSIONS = new Set(['signSale', 'createSale', 'retrySale', 'createCreditNote']);
const SALE_CALLS = new Set([...SUBMISSIONS, 'getDocument', 'checkItems']);

export interface OutageBoard {
  /** The sides an application's watch holds sales waiting on now (empty: none, or no watch running). */
  down(complianceQueue: string, fairnessKey: string): Promise<ReadonlySet<OutageSide>>;
  /**
   * `outage` twice in a row makes the service suspect here until the watch knows; `answered` clears it; `joined`: a
   * sale of this process waits on the watch (an authority outage shows in outcomes, not answers), so it is read.
   */
  observe(complianceQueue: string, fairnessKey: string, found: 'outage' | 'answered' | 'joined'): void;
}

export function outageBoard(client: Client, now: () => number = Date.now): OutageBoard {
  type Read = { at: number; sides: Promise<ReadonlySet<OutageSide>>; known?: ReadonlySet<OutageSide> };
  const read = new Map<string, Read>();
  const suspectUntil = new Map<string, number>();
  const failedInRow = new Map<string, number>();
  const lastOutageAt = new Map<string, number>();
  async function sidesOf(workflowId: string): Promise<ReadonlySet<OutageSide>> {
    try {
      const handle = client.workflow.getHandle(workflowId);
      // A closed watch is not queried: that would replay its whole history on a worker.
      if ((await handle.describe()).status.name !== 'RUNNING') return new Set();
      const state: OutageWatchState = await handle.query(getOutageWatchStateQuery);
      return new Set((['service', 'authority'] as const).filter((side) => state.waiting[side] > 0));
    } catch {
      // No watch (never started), or Temporal not answering: nothing known to be down, so the call is made.
      return new Set();
    }
  }
  return {
    observe(complianceQueue, fairnessKey, found) {
      const workflowId = outageWatchWorkflowId(complianceQueue, fairnessKey);
      if (found === 'answered') {
        failedInRow.delete(workflowId);
        suspectUntil.delete(workflowId);
        // The service answered: a read saying it is down is out of date (the watch has just sent its sales).
        if (read.get(workflowId)?.known?.has('service')) read.delete(workflowId);
        return;
      }
      lastOutageAt.set(workflowId, now());
      if (found === 'joined') {
        // Read anew at the next call: the watch holds this sale now.
        read.delete(workflowId);
        return;
      }
      const failed = (failedInRow.get(workflowId) ?? 0) + 1;
      failedInRow.set(workflowId, failed);
      if (failed >= SUSPECT_AFTER) suspectUntil.set(workflowId, now() + SUSPECT_MS);
    },
    async down(complianceQueue, fairnessKey) {
      const workflowId = outageWatchWorkflowId(complianceQueue, fairnessKey);
      // No call of this process met an outage lately: nothing to ask, so a fleet at work pays no visibility reads.
      if (now() - (lastOutageAt.get(workflowId) ?? -Infinity) > CONSULT_AFTER_OUTAGE_MS) return new Set();
      const suspected = (suspectUntil.get(workflowId) ?? 0) > now();
      let entry = read.get(workflowId);
      if (!entry || now() - entry.at >= READ_EVERY_MS) {
        const fresh: Read = { at: now(), sides: sidesOf(workflowId) };
        void fresh.sides.then((sides) => (fresh.known = sides));
        read.set(workflowId, (entry = fresh));
      }
      const sides = await entry.sides;
      return suspected ? new Set([...sides, 'service' as const]) : sides;
    },
  };
}

/** Throws the retryable, never-sent `outage_known` when this activity's call would go to a side known down. */
export async function holdDuringOutage(board: OutageBoard | undefined): Promise<void> {
  if (!board) return;
  const { activityType, isLocal, retryPolicy, taskQueue, priority } = Context.current().info;
  const fairnessKey = priority?.fairnessKey;
  // A sale's single try is its application's probe, or a sale just sent on by the watch: it is always sent. A stock
  // movement (one try too) is held: refused unsent, the ledger knows it was not taken and sends it again later.
  if (isLocal || !fairnessKey || (retryPolicy?.maximumAttempts === 1 && SALE_CALLS.has(activityType))) return;
  const down = await board.down(taskQueue, fairnessKey);
  const side: OutageSide | undefined = down.has('service')
    ? 'service'
    : down.has('authority') && SUBMISSIONS.has(activityType)
      ? 'authority'
      : undefined;
  if (!side) return;
  // A sale's call gives up its tries at once and the sale waits on the watch: held tries would each take a start of
  // the queue's rate, faster than it refills. Other work (unlimited tries) waits in its retries.
  const saleWaits = SALE_CALLS.has(activityType) && (retryPolicy?.maximumAttempts ?? 0) > 1;
  const which = side === 'service' ? 'compliance service' : 'tax authority';
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.outageKnown,
    message: `not sent: the ${which} is down for this application`,
    ...(saleWaits ? { nonRetryable: true } : { nextRetryDelay: 15_000 }),
    details: [{ requestSent: false, side }],
    category: ApplicationFailureCategory.BENIGN,
  });
}

/** Tells the board what this activity's call found, so the process holds back its other calls during an outage. */
export function observeCall(board: OutageBoard | undefined, err: unknown): void {
  const { taskQueue, priority } = Context.current().info;
  if (!board || !priority?.fairnessKey) return;
  if (err === undefined) return board.observe(taskQueue, priority.fairnessKey, 'answered');
  if (!(err instanceof ApiError)) return;
  const outage = err.status === undefined || err.status >= 500 || err.status === 408;
  // A 4xx is an answer: the service is up, whatever it said.
  board.observe(taskQueue, priority.fairnessKey, outage ? 'outage' : 'answered');
}
