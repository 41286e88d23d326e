/** Waiting for room in a receiver of stock lines: senders pace themselves by its backlog (STOCK_PACE). */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { getBacklogQuery } from '../src/contracts/stock-ledger.js';
import { whileAlive } from './api-call.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';

const POLL_MS = 2_000;
/** A query is answered in milliseconds while the receiver's workers poll; past this, none is there to answer. */
const QUERY_TIMEOUT_MS = 10_000;

export interface WaitForRoomInput {
  workflowId: string;
  /** Room is a backlog of at most this many lines. */
  atMost: number;
  /** How long this attempt waits at most; the caller asks again. */
  waitMs: number;
}

/** The backlog last read (0: the receiver is not running); null: none could be read. */
export interface WaitForRoomResult {
  backlog: number | null;
  room: boolean;
}

/** The receiver's backlog; 0 when it is not running (it starts empty), null when no worker answers. */
export async function readBacklog(client: Client, workflowId: string): Promise<number | null> {
  try {
    return await client.withAbortSignal(AbortSignal.timeout(QUERY_TIMEOUT_MS), () =>
      client.workflow.getHandle(workflowId).query(getBacklogQuery),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 0;
    return null;
  }
}

/**
 * Reads the receiver's backlog every 2 s until it is at most `atMost`, or `waitMs` passed. A backlog
 * that cannot be read counts as room: pacing must never stop stock that could go (the receiver's carry is bounded by
 * its own hand-overs to the next run, only less tightly).
 */
export async function waitForRoom(client: Client, input: WaitForRoomInput): Promise<WaitForRoomResult> {
  const until = Date.now() + input.waitMs;
  for (;;) {
    const backlog = await readBacklog(client, input.workflowId);
    if (backlog === null || backlog <= input.atMost) return { backlog, room: true };
    if (Date.now() + POLL_MS > until) return { backlog, room: false };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export function createBacklogActivities(deps: Pick<ActivityDeps, 'temporal' | 'logger'>) {
  return {
    /** Until the receiver's backlog leaves room, or the attempt's wait is over (the workflow asks again). */
    async waitForStockRoom(input: WaitForRoomInput): Promise<WaitForRoomResult> {
      // Alive on a clock, a slow query included: one lost with its worker is asked again within the heartbeat timeout.
      const result = await whileAlive(() => waitForRoom(temporalClientOf(deps, 'waitForStockRoom'), input));
      if (result.backlog === null)
        deps.logger.warn(
          { workflowId: input.workflowId },
          'the backlog of a stock receiver could not be read (no worker of its build answers): stock goes on unpaced',
        );
      return result;
    },
  };
}
