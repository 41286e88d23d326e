/**
 * A worker process: callback receiver, tenant access, workers and schedules. `connectWorkerProcess` opens its own
 * Temporal connections; `startWorkerProcess` is its second half, for callers that bring their own (tests, benchmark).
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
import type { PurchaseEventSink } from '../purchases/event-sink.js';
import type { EnsuredSchedule } from '../reconciliation/schedule.js';
import { resolveServices, type EmbeddedSandbox } from '../services/endpoints.js';
import { complianceRateMetrics } from '../temporal/rate-budget-metrics.js';
import {
  connectClient,
  connectNative,
  DEFAULT_TEMPORAL_ADDRESS,
  type TemporalSettings,
} from '../temporal/connection.js';
import { requireSearchAttributes } from '../temporal/ensure-search-attributes.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { openTenantAccess } from '../tenants/access.js';
import { holdTenantBudgets } from '../tenants/budgets.js';
import type { TenantDirectory } from '../tenants/directory.js';
import type { OutageRetry } from '../tenants/awaited.js';
import { openLiveTenants, type LiveTenants, type TenantsChange } from '../tenants/live.js';
import { ENVIRONMENT_ORIGIN, singleKeyTenants } from '../tenants/single-key.js';
import type { TenantsConfig } from '../tenants/types.js';
import { watchTenants, type TenantsReload } from '../tenants/watch.js';
import { SettledDocuments } from '../callbacks/settled-documents.js';
import { startCallbacks } from './callbacks.js';
import {
  purchasesBusinessIds,
  scheduleServed,
  servedBusinesses,
  setSchedulesPaused,
  type PurchasesSyncStatus,
} from './schedules.js';
import type { WorkerSettings } from './settings.js';
import { tenantChangeActor } from './tenant-changes.js';
import { createWorkers, type Workers } from './workers.js';

/** `stockReporting` absent: every business on the default (DEFAULT_STOCK_REPORTING). */
export type WorkerProcessSettings = Pick<
  WorkerSettings,
  'worker' | 'activitiesPerSecond' | 'purchases' | 'reconciliation'
> &
  Partial<Pick<WorkerSettings, 'stockReporting'>>;

export interface WorkerProcess {
  workers: Workers;
  tenants: LiveTenants;
  /** Present when result callbacks are received (a public base URL is configured, or on a local stack). */
  callbacks: CallbackServer | undefined;
  /** Undefined when polling only. */
  callbackUrls: CallbackUrlMinter | undefined;
  purchases: PurchasesSyncStatus;
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
  /** Resolved against the services at start: every key checked, or the start stops. */
  tenants: TenantsConfig;
  tenantsReload?: TenantsReload;
  settings: WorkerProcessSettings;
  logger: Logger;
  /** The workflow queue (default `sales`); the service queues derive from it. */
  taskQueue?: string;
  /** Default: bundle the workflow sources at start. */
  workflowBundle?: WorkflowBundle;
  /** The client given is expected to use the same. */
  dataConverter?: DataConverter;
  /** Default: the sink the settings name, opened here. */
  purchasesSink?: PurchaseEventSink;
  /** Tests shorten delivery retries. */
  purchasesSyncOptions?: PurchasesSyncOptions;
  /** How a key whose service is down at start is asked again (default 5 s, doubling to 60 s); tests shorten it. */
  outageRetry?: OutageRetry;
}): Promise<WorkerProcess> {
  const { settings, logger, client, tenants } = options;
  const taskQueue = options.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const metrics = createMetricsRecorder(Runtime.instance().metricMeter, { namespace: options.namespace, taskQueue });
  const changes = tenantChangeActor(logger);
  // Every key is asked who it is before anything else opens: a refused one stops the start (TenantConfigError; for
  // the single-key variables, TenantServiceError naming the variable), as does a link its keys cannot see. A service
  // that is down does not: a rolling restart during an outage would take the fleet down. Its keys are asked again in
  // the background, and served (budgets, schedules) once they answer; meanwhile their businesses wait.
  const live = await openLiveTenants(tenants, {
    logger,
    observerFor: (application) => complianceRateMetrics(metrics, application.application),
    awaitOutages: { ...options.outageRetry, onAwaitedServed: (change) => changes.later(change) },
  });
  const services = openTenantAccess(live);
  const opened: Array<() => Promise<unknown>> = [() => services.close(), () => changes.stop()];
  const close = async () => {
    for (const release of opened.reverse()) await release().catch(() => undefined);
  };
  try {
    // Before any worker polls: each application's calls are held to its own budget from the first one.
    const holdBudgets = () =>
      holdTenantBudgets({
        client,
        taskQueue,
        directory: live.current(),
        headroom: settings.worker.complianceRateHeadroom,
        metrics,
        logger,
      });
    const queues = await holdBudgets();
    const activitiesPerSecond = {
      ...settings.activitiesPerSecond,
      compliance:
        queues.shared.queuePerSecond + awaitedPerSecond(tenants, live, settings.worker.complianceRateHeadroom),
    };
    // At zero well before the start-up sync can count (the workflow bundle takes seconds): a scrape in between gives
    // increase() the zero it counts the first sync from.
    metrics.knowBusinesses('purchases', purchasesBusinessIds(settings.purchases, servedBusinesses(live.current())));
    const settled = new SettledDocuments();
    const callbacks = await startCallbacks(settings.worker, tenants, client, logger, metrics, settled);
    if (callbacks) opened.push(() => callbacks.server.close());
    const purchasesSink = options.purchasesSink ?? (await createSink(settings.purchases.sink));
    if (purchasesSink) opened.push(() => purchasesSink.close());
    const workers = await createWorkers({
      connection: options.connection,
      namespace: options.namespace,
      client,
      services,
      logger,
      activitiesPerSecond,
      taskQueue,
      workflowBundle: options.workflowBundle,
      dataConverter: options.dataConverter,
      callbackUrls: callbacks?.minter,
      settledDocuments: settled,
      purchasesSink,
      stockReporting: settings.stockReporting,
      metrics,
    });
    await workers.serveWindowQueues(queues.own);
    const scheduling = { client, settings, logger, taskQueue, metrics, syncOptions: options.purchasesSyncOptions };
    const { purchases, reconciliation } = await scheduleServed(scheduling, live.current());
    logger.info(
      {
        taskQueue,
        queues: [workers.workflows, workers.compliance, workers.accounting].map((w) => w.options.taskQueue),
        ...described(tenants, live.current()),
        activitiesPerSecond: {
          compliance: Number(activitiesPerSecond.compliance.toFixed(3)),
          accounting: activitiesPerSecond.accounting,
        },
        callbacks: callbacks ? 'receiving' : 'polling only',
      },
      'workers ready',
    );
    changes.begin(async (change: TenantsChange) => {
      await workers.serveWindowQueues((await holdBudgets()).own);
      const paused = { client, taskQueue, purchases: settings.purchases, logger };
      await setSchedulesPaused({ ...paused, businessIds: change.businessesRemoved, paused: true });
      await scheduleServed(scheduling, live.current());
      await setSchedulesPaused({ ...paused, businessIds: change.businessesAdded, paused: false });
    });
    return {
      workers,
      tenants: live,
      callbacks: callbacks?.server,
      callbackUrls: callbacks?.minter,
      purchases,
      reconciliation,
      run: async () => {
        const stopWatching = watchOperatorWork({
          client,
          taskQueue,
          metrics,
          logger,
          intervalMs: settings.worker.operatorWorkCountIntervalMs,
        });
        const stopWatchingTenants = options.tenantsReload
          ? watchTenants({
              live,
              reload: options.tenantsReload,
              served: tenants,
              onChange: (change) => changes.now(change),
              logger,
              metrics,
            })
          : undefined;
        try {
          await workers.run();
        } finally {
          stopWatching();
          await stopWatchingTenants?.();
          await changes.stop();
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

/**
 * The budget of the compliance keys not answered yet, in activity starts per second: the workers' own rate is set
 * once, at creation, and must leave room for them once they answer (the server's per-key limits hold each one).
 */
function awaitedPerSecond(tenants: TenantsConfig, live: LiveTenants, headroom: number): number {
  const awaited = new Set(
    live
      .current()
      .awaited()
      .map((entry) => entry.source),
  );
  return tenants.compliance
    .filter((tenant) => awaited.has(tenant.source))
    .reduce((sum, tenant) => sum + (tenant.requestsPerMinute * (1 - headroom)) / 60, 0);
}

/** For `workers ready`: where the services are and what is served, never a key. */
function described(tenants: TenantsConfig, directory: TenantDirectory): Record<string, unknown> {
  const urls = (entries: ReadonlyArray<{ service: { baseUrl: string } }>) =>
    [...new Set(entries.map((entry) => entry.service.baseUrl))].join(', ');
  const applications = directory.applications();
  return {
    services: { compliance: urls(tenants.compliance), accounting: urls(tenants.accounting) },
    tenants: {
      origin: directory.origin,
      businesses: servedBusinesses(directory).length,
      compliance: applications.map((application) => ({
        application: application.application,
        businesses: application.businesses.length,
        requestsPerMinute: application.requestsPerMinute,
      })),
      accounting: directory
        .accountingApplications()
        .map((application) => ({ application: application.application, companies: application.companies.length })),
      links: directory.links().length,
      ...(directory.awaited().length > 0
        ? { awaited: directory.awaited().map((entry) => `${entry.service} ${entry.application}`) }
        : {}),
    },
  };
}

export interface ConnectedWorkerProcess {
  client: Client;
  worker: WorkerProcess;
  /** The embedded sandbox standing in for a service the single-key variables leave unconfigured. */
  sandbox: EmbeddedSandbox | undefined;
  /** After worker.run() has returned: the worker process, the Temporal connections, then the sandbox. */
  close(): Promise<void>;
}

/**
 * A worker process, checked before anything starts: the embedded sandbox when asked for, Temporal and its search
 * attributes, every key; only then the callback receiver and the workers. A failure closes whatever was opened.
 * `temporal`: default settings.temporal (a local stack passes the dev server it started).
 */
export async function connectWorkerProcess(
  settings: WorkerSettings,
  logger: Logger,
  options: { temporal?: TemporalSettings; taskQueue?: string } = {},
): Promise<ConnectedWorkerProcess> {
  const { encryption } = settings;
  logger.info(
    {
      payloadEncryption: encryption.encrypted ? `on, new payloads under key ${encryption.keyRing.encryptKeyId}` : 'off',
    },
    'payload encryption',
  );
  const opened: Array<() => Promise<unknown>> = [];
  const closeOpened = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
  };
  try {
    let { tenants } = settings;
    let sandbox: EmbeddedSandbox | undefined;
    const { services } = settings;
    // The embedded sandbox in place of each service the single-key variables leave unconfigured.
    if (tenants.origin === ENVIRONMENT_ORIGIN && !(services.compliance && services.accounting)) {
      const endpoints = await resolveServices(services, logger);
      opened.push(() => endpoints.close());
      const configured = tenants.compliance[0];
      tenants = singleKeyTenants(endpoints, {
        requestsPerMinute: configured?.requestsPerMinute ?? settings.worker.complianceRequestsPerMinute,
        // The sandbox's key serves every business of its world; a configured key what COMPLIANCE_BUSINESS_ID says.
        businesses: configured?.businesses,
        links: tenants.links,
      });
      sandbox = endpoints.sandbox;
    }
    const temporal = options.temporal ?? settings.temporal;
    const { namespace } = temporal;
    const clientConnection = await connectClient(temporal);
    opened.push(() => clientConnection.close());
    const searchAttributes = await requireSearchAttributes(clientConnection, {
      namespace,
      address: temporal.address ?? DEFAULT_TEMPORAL_ADDRESS,
      keys: projectSearchAttributes,
    });
    logger.info({ namespace, searchAttributes }, 'search attributes checked');
    const connection = await connectNative(temporal);
    opened.push(() => connection.close());
    const client = new Client({
      connection: clientConnection,
      namespace,
      dataConverter: encryption.dataConverter,
      plugins: tracingPlugins(),
    });
    const worker = await startWorkerProcess({
      connection,
      client,
      namespace,
      tenants,
      tenantsReload: settings.tenantsReload,
      settings,
      logger,
      dataConverter: encryption.dataConverter,
      taskQueue: options.taskQueue,
    });
    return {
      client,
      worker,
      sandbox,
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
