import type { Client } from '@temporalio/client';
import type { Logger } from '../src/logger.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import type { ServiceAccess } from '../src/services/access.js';
import type { ItemRegistry } from './item-registry.js';

/** Mints the callback URL of one workflow execution; the URL carries a capability token, so it is never logged or returned. */
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
  /** Needed by requestItemRegistration only. */
  temporal?: { client: Client };
  /** Task queue of the item-registration workflows when the caller names none (default WORKFLOW_TASK_QUEUE). */
  workflowTaskQueue?: string;
  logger: Logger;
  /** The worker's metrics (absent: nothing recorded). */
  metrics?: MetricsRecorder;
}
