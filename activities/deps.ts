import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import type { Logger } from '../src/logger.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import type { ServiceAccess } from '../src/services/access.js';
import type { ItemRegistry } from './item-registry.js';
import type { OutageBoard } from './outage-gate.js';
import type { StockReporting } from '../src/contracts/stock-ledger.js';
import type { StockInSettingsOf } from '../src/config/stock-in.js';

export interface ActivityDeps {
  services: ServiceAccess;
  /** Share one per worker process. */
  itemRegistry: ItemRegistry;
  /** Present when a public callback base URL is configured; a URL carries a token: never logged or returned. */
  callbackUrls?: { mint(workflowId: string, anchorMs?: number): string };
  /** Told of each document signed in the answer to a filing that carried a callback URL. */
  settledDocuments?: { signedInAnswer(documentId: string): void };
  /** How each business's stock is reported (src/config/stock-reporting.ts), told to its ledger with every hand-over. */
  stockReporting?: (businessId: string) => StockReporting;
  /** Which businesses take their supplier invoices in as stock (src/config/stock-in.ts); absent: none does. */
  stockIn?: StockInSettingsOf;
  /** Needed by the activities that start or signal workflows: item registrations, stock hand-overs, outage watches. */
  temporal?: { client: Client };
  logger: Logger;
  metrics?: MetricsRecorder;
  /** Which applications' outage watches hold sales waiting: read through `temporal`'s client. */
  outages?: OutageBoard | undefined;
  /** Work an activity leaves running after its answer (a day book's entry): a stopping worker waits for it. */
  afterAnswers?: Set<Promise<unknown>>;
}

export function temporalClientOf(deps: Pick<ActivityDeps, 'temporal'>, activity: string): Client {
  const client = deps.temporal?.client;
  if (client) return client;
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.notConfigured,
    message: `${activity}: the worker was started without a Temporal client (ActivityDeps.temporal)`,
    nonRetryable: true,
  });
}

/**
 * An update of one of our own workflows, from an activity: answered in milliseconds while its workers poll. Bounded, so
 * that an activity never waits out a worker's shutdown grace for an update its own stopping process cannot answer:
 * the attempt fails and is retried (elsewhere), the update being one that can be applied again.
 */
export async function updateOfOwnWorkflow<T>(client: Client, call: () => Promise<T>): Promise<T> {
  const timeout = AbortSignal.timeout(OWN_UPDATE_TIMEOUT_MS);
  const cancelled = activityCancellation();
  const signal = cancelled ? AbortSignal.any([cancelled, timeout]) : timeout;
  // The client's wait for an update's outcome polls on; the activity stops waiting when the signal fires, whatever the
  // RPC in flight does.
  let stop: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    stop = () => reject(new Error(`an update of our own workflow took over ${OWN_UPDATE_TIMEOUT_MS / 1000} s`));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([client.withAbortSignal(signal, call), stopped]);
  } finally {
    signal.removeEventListener('abort', stop!);
    stopped.catch(() => undefined);
  }
}

/** The running activity's cancellation; none when called outside one (a tool reading the books directly). */
function activityCancellation(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

const OWN_UPDATE_TIMEOUT_MS = 10_000;
