/**
 * What a worker process runs: the callback receiver, the access to each service, the three workers and the
 * schedules made at start-up. `connectWorkerProcess` is the one way a process starts (`npm run worker`, the local
 * stack); `startWorkerProcess` is its second half, for callers that bring their own Temporal connections (tests,
 * the benchmark).
 */
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Runtime, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { CallbackServer } from '../callbacks/server.js';
import type { CallbackUrlMinter } from '../callbacks/tokens.js';
import type { PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { projectSearchAttributes } from '../contracts/search-attributes.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { watchOperatorWork } from '../metrics/operator-work.js';
import { createMetricsRecorder } from '../metrics/recorder.js';
import { createSink } from '../purchases/sink.js';
import { type PurchaseEventSink } from '../purchases/event-sink.js';
import type { EnsuredSchedule } from '../reconciliation/schedule.js';
import { openServiceAccess } from '../services/access.js';
import { checkServiceCredentials, resolveServices, type ServiceEndpoints } from '../services/endpoints.js';
import { connectClient, connectNative, DEFAULT_TEMPORAL_ADDRESS, type TemporalSettings } from '../temporal/connection.js';
import { requireSearchAttributes } from '../temporal/ensure-search-attributes.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { startCallbacks } from './callbacks.js';
import { checkReconciliationLinks, schedulePurchasesSync, scheduleReconciliation, type PurchasesSyncStatus } from './schedules.js';
import type { WorkerSettings } from './settings.js';
import { createWorkers, type Workers } from './workers.js';

/** The settings the workers, the callback receiver and the schedules use. */
export type WorkerProcessSettings = Pick<WorkerSettings, 'worker' | 'activitiesPerSecond' | 'purchases' | 'reconciliation'>;

export interface WorkerProcess {
  workers: Workers;
  /** Present when result callbacks are received (a public base URL is configured, or on a local stack). */
  callbacks: CallbackServer | undefined;
  /** Mints the callback URLs the workers hand to the compliance service; undefined when polling only. */
  callbackUrls: CallbackUrlMinter | undefined;
  /** Whether the purchases sync is on (PURCHASES_SINK) and its schedules. */
  purchases: PurchasesSyncStatus;
  /** The reconciliation schedules made at start (none without RECONCILE_LINKS). */
  reconciliation: EnsuredSchedule[];
  /** Runs until shutdown(); rejects if a worker fails. */
  run(): Promise<void>;
  shutdown(): void;
  /** Releases the HTTP clients, the sink and the callback server after run() has returned. */
  close(): Promise<void>;
}

/** The worker side of the product on Temporal connections the caller opened. */
export async function startWorkerProcess(options: {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  services: Pick<ServiceEndpoints, 'compliance' | 'accounting'>;
  settings: WorkerProcessSettings;
  logger: Logger;
  /** The workflow queue (default `sales`); the service queues derive from it. */
  taskQueue?: string;
  /** A bundle built ahead of time (default: bundle the workflow sources at start). */
  workflowBundle?: WorkflowBundle;
  /** Payload encryption of the workers (the client given is expected to use the same). */
  dataConverter?: DataConverter;
  /** Where the purchases sync delivers (default: the sink the settings name, opened here). */
  purchasesSink?: PurchaseEventSink;
  /** Passed to every purchases sync (tests shorten delivery retries). */
  purchasesSyncOptions?: PurchasesSyncOptions;
}): Promise<WorkerProcess> {
  const { settings, logger } = options;
  const taskQueue = options.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const metrics = createMetricsRecorder(Runtime.instance().metricMeter, { namespace: options.namespace, taskQueue });
  const services = openServiceAccess(options.services, {
    metrics: { recorder: metrics, complianceBudget: { activitiesPerSecond: settings.activitiesPerSecond.compliance } },
  });
  const opened: Array<() => Promise<unknown>> = [() => services.close()];
  const close = async () => {
    for (const release of opened.reverse()) await release().catch(() => undefined);
  };
  try {
    // A wrong link is configuration: refused before anything is started.
    await checkReconciliationLinks(services, settings.reconciliation);
    const callbacks = await startCallbacks(settings.worker, options.services, options.client, logger, metrics);
    if (callbacks) opened.push(() => callbacks.server.close());
    const purchasesSink = options.purchasesSink ?? (await createSink(settings.purchases.sink));
    if (purchasesSink) opened.push(() => purchasesSink.close());
    const workers = await createWorkers({
      connection: options.connection,
      namespace: options.namespace,
      client: options.client,
      services,
      logger,
      activitiesPerSecond: settings.activitiesPerSecond,
      taskQueue,
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
      ...(callbacks ? { callbackUrls: callbacks.minter } : {}),
      ...(purchasesSink ? { purchasesSink } : {}),
      metrics,
    });
    const purchases = await schedulePurchasesSync({
      client: options.client,
      services,
      config: settings.purchases,
      logger,
      taskQueue,
      ...(options.purchasesSyncOptions ? { syncOptions: options.purchasesSyncOptions } : {}),
    });
    metrics.knowBusinesses('purchases', purchases.schedules.map((schedule) => schedule.businessId));
    const reconciliation = await scheduleReconciliation({ client: options.client, config: settings.reconciliation, logger, taskQueue });
    metrics.knowBusinesses('reconciliation', settings.reconciliation.links.map((link) => link.businessId));
    logger.info(
      {
        taskQueue,
        queues: [workers.workflows, workers.compliance, workers.accounting].map((w) => w.options.taskQueue),
        services: { compliance: options.services.compliance.baseUrl, accounting: options.services.accounting.baseUrl },
        activitiesPerSecond: {
          compliance: Number(settings.activitiesPerSecond.compliance.toFixed(3)),
          accounting: settings.activitiesPerSecond.accounting,
        },
        callbacks: callbacks ? 'receiving' : 'polling only',
      },
      'workers ready',
    );
    return {
      workers,
      callbacks: callbacks?.server,
      callbackUrls: callbacks?.minter,
      purchases,
      reconciliation,
      run: async () => {
        const stopWatching = watchOperatorWork({
          client: options.client,
          taskQueue,
          metrics,
          logger,
          ...(settings.worker.operatorWorkCountIntervalMs ? { intervalMs: settings.worker.operatorWorkCountIntervalMs } : {}),
        });
        try {
          await workers.run();
        } finally {
          stopWatching();
        }
      },
      shutdown: () => workers.shutdown(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A worker process on its own Temporal connections, with its services. */
export interface ConnectedWorkerProcess {
  client: Client;
  services: ServiceEndpoints;
  worker: WorkerProcess;
  /** After worker.run() has returned: the worker process, the Temporal connections, then the services. */
  close(): Promise<void>;
}

/**
 * A worker process, checked before anything starts (its settings, services included, were checked when loaded):
 * Temporal
 * reachable with these credentials and namespace, the project's search attributes registered (or a
 * SearchAttributesError naming the command an administrator must run), each service's credentials accepted; only
 * then the callback receiver and the workers. A failure closes whatever was opened and throws an error that names
 * what failed and never a secret.
 */
export async function connectWorkerProcess(
  settings: WorkerSettings,
  logger: Logger,
  options: {
    /** Where Temporal is (default: settings.temporal). A local stack passes the dev server it started. */
    temporal?: TemporalSettings;
  } = {},
): Promise<ConnectedWorkerProcess> {
  const { encryption } = settings;
  logger.info({ payloadEncryption: encryption.encrypted ? `on, new payloads under key ${encryption.keyRing.encryptKeyId}` : 'off' }, 'payload encryption');
  const temporal = options.temporal ?? settings.temporal;
  const namespace = temporal.namespace;
  const opened: Array<() => Promise<unknown>> = [];
  const closeOpened = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
  };
  try {
    // The embedded sandbox, when asked for, first: where it is not installed that is the error to see, whatever
    // else is wrong.
    const services = await resolveServices(settings.services, logger);
    opened.push(() => services.close());
    const clientConnection = await connectClient(temporal);
    opened.push(() => clientConnection.close());
    const address = temporal.address ?? DEFAULT_TEMPORAL_ADDRESS;
    const searchAttributes = await requireSearchAttributes(clientConnection, { namespace, address, keys: projectSearchAttributes });
    logger.info({ namespace, searchAttributes }, 'search attributes checked');
    const connection = await connectNative(temporal);
    opened.push(() => connection.close());
    await checkServiceCredentials(services, logger);
    const { dataConverter } = encryption;
    const client = new Client({ connection: clientConnection, namespace, dataConverter, plugins: tracingPlugins() });
    const worker = await startWorkerProcess({ connection, client, namespace, services, settings, logger, dataConverter });
    return {
      client,
      services,
      worker,
      close: async () => {
        await worker.close();
        await closeOpened();
      },
    };
  } catch (err) {
    await closeOpened();
    throw err;
  }
}
