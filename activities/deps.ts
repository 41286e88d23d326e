import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import type { Logger } from '../src/logger.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import type { ServiceAccess } from '../src/services/access.js';
import type { ItemRegistry } from './item-registry.js';
import type { StockReporting } from '../src/contracts/stock-ledger.js';

/**
 * Mints the callback URL of one workflow execution; the URL carries a capability token, so it is never logged or
 * returned.
 */
export interface CallbackUrlSource {
  mint(workflowId: string): string;
}

/** Everything the activities use, injected by the worker (no globals). */
export interface ActivityDeps {
  /** The client of the business (or company) an activity acts for. */
  services: ServiceAccess;
  /** Per-process cache of item registration; share one per worker process. */
  itemRegistry: ItemRegistry;
  /** Present when a public callback base URL is configured. */
  callbackUrls?: CallbackUrlSource;
  /** How each business's stock is reported (src/config/stock-reporting.ts), told to its ledger with every hand-over. */
  stockReporting?: (businessId: string) => StockReporting;
  /** Needed by requestItemRegistration and handOverStock only. */
  temporal?: { client: Client };
  /** Task queue of the item-registration workflows when the caller names none (default WORKFLOW_TASK_QUEUE). */
  workflowTaskQueue?: string;
  logger: Logger;
  /** The worker's metrics (absent: nothing recorded). */
  metrics?: MetricsRecorder;
}

/**
 * The worker's Temporal client, for an activity that talks to Temporal; a worker started without one is misconfigured.
 */
export function temporalClientOf(deps: Pick<ActivityDeps, 'temporal'>, activity: string): Client {
  const client = deps.temporal?.client;
  if (client) return client;
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.notConfigured,
    message: `${activity}: the worker was started without a Temporal client (ActivityDeps.temporal)`,
    nonRetryable: true,
  });
}
