/**
 * What a worker process runs: the callback receiver, the access to each service, the three workers and the
 * schedules made at start-up. `connectWorkerProcess` is the way a single-key process starts (`npm run worker`, the
 * local stack), `connectTenantsWorkerProcess` the way a process serving a tenants file does (issue 16);
 * `startWorkerProcess` is their second half, for callers that bring their own Temporal connections (tests, the
 * benchmark).
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
import type { ReconciliationConfig } from '../config/reconciliation.js';
import { ConfigError } from '../config/env.js';
import type { TenantsConfig } from '../tenants/types.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { EnsuredSchedule } from '../reconciliation/schedule.js';
import { openServiceAccess, type OpenServiceAccess } from '../services/access.js';
import { checkServiceCredentials, resolveServices, type ServiceEndpoints } from '../services/endpoints.js';
import { openLiveTenants, type LiveTenants, type TenantsChange } from '../tenants/live.js';
import { openTenantAccess } from '../tenants/access.js';
import type { TenantDirectory } from '../tenants/directory.js';
import { applicationRateMetrics, bothObservers, complianceTrafficMetrics } from '../temporal/rate-budget-metrics.js';
import {
  connectClient,
  connectNative,
  DEFAULT_TEMPORAL_ADDRESS,
  type TemporalSettings,
} from '../temporal/connection.js';
import { requireSearchAttributes } from '../temporal/ensure-search-attributes.js';
import { tracingPlugins } from '../temporal/tracing.js';
import {
  endpointCallbackServices,
  startCallbacks,
  tenantCallbackServices,
  type CallbackServices,
} from './callbacks.js';
import {
  checkReconciliationLinks,
  schedulePurchasesSync,
  scheduleReconciliation,
  type PurchasesSyncStatus,
} from './schedules.js';
import { type WorkerSettings } from './settings.js';
import { holdTenantBudgets, setSchedulesPaused } from '../tenants/budgets.js';
import { watchTenants, type TenantsReload } from '../tenants/watch.js';
import { createWorkers, type Workers } from './workers.js';

/** The settings the workers, the callback receiver and the schedules use. */
/** `stockReporting` absent: every business on the default (DEFAULT_STOCK_REPORTING). */
export type WorkerProcessSettings = Pick<
  WorkerSettings,
  'worker' | 'activitiesPerSecond' | 'purchases' | 'reconciliation'
> &
  Partial<Pick<WorkerSettings, 'stockReporting'>>;

export interface WorkerProcess {
  workers: Workers;
  /** With tenants: which application serves which business, now (the tenants file may change); undefined for one key. */
  tenants: LiveTenants | undefined;
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

/**
 * Where a process's calls go: one application of each service (the single-key variables, or the embedded sandbox),
 * or the tenants of a tenants file, resolved against the services at start (every key checked, or the start stops).
 */
export type WorkerProcessServices =
  | { services: Pick<ServiceEndpoints, 'compliance' | 'accounting'>; tenants?: undefined }
  | { tenants: TenantsConfig; services?: undefined };

/** The worker side of the product on Temporal connections the caller opened. */
export async function startWorkerProcess(
  options: WorkerProcessServices & {
    connection: NativeConnection;
    client: Client;
    namespace: string;
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
    /** With tenants: read them again every interval and serve what changed (TENANTS_RELOAD_SECONDS). */
    tenantsReload?: TenantsReload;
  },
): Promise<WorkerProcess> {
  const { settings, logger } = options;
  const taskQueue = options.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const metrics = createMetricsRecorder(Runtime.instance().metricMeter, { namespace: options.namespace, taskQueue });
  // Every key is asked who it is before anything else opens: a refused one stops the start (TenantConfigError).
  const reach = options.tenants
    ? await reachTenants(options.tenants, settings, metrics, logger)
    : reachEndpoints(options.services, settings, metrics);
  const { services } = reach;
  const opened: Array<() => Promise<unknown>> = [() => services.close()];
  const close = async () => {
    for (const release of opened.reverse()) await release().catch(() => undefined);
  };
  try {
    // A wrong link is configuration: refused before anything is started. The tenant directory checked its links.
    if (!reach.live) await checkReconciliationLinks(services, reach.reconciliation);
    // Before any worker polls: each application's calls are held to its own budget from the first one.
    const holdBudgets = (directory: TenantDirectory) =>
      holdTenantBudgets({
        client: options.client,
        taskQueue,
        directory,
        headroom: settings.worker.complianceRateHeadroom,
        metrics,
        logger,
      });
    const queues = reach.live ? await holdBudgets(reach.live.current()) : undefined;
    const complianceActivitiesPerSecond = queues
      ? queues.shared.queuePerSecond
      : settings.activitiesPerSecond.compliance;
    const activitiesPerSecond = { ...settings.activitiesPerSecond, compliance: complianceActivitiesPerSecond };
    const callbacks = await startCallbacks(settings.worker, reach.callbacks, options.client, logger, metrics);
    if (callbacks) opened.push(() => callbacks.server.close());
    const purchasesSink = options.purchasesSink ?? (await createSink(settings.purchases.sink));
    if (purchasesSink) opened.push(() => purchasesSink.close());
    const workers = await createWorkers({
      connection: options.connection,
      namespace: options.namespace,
      client: options.client,
      services,
      logger,
      activitiesPerSecond,
      taskQueue,
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
      ...(callbacks ? { callbackUrls: callbacks.minter } : {}),
      ...(purchasesSink ? { purchasesSink } : {}),
      ...(settings.stockReporting ? { stockReporting: settings.stockReporting } : {}),
      metrics,
    });
    if (queues) await workers.serveWindowQueues(queues.own);
    const purchases = await schedulePurchasesSync({
      client: options.client,
      services,
      ...(reach.live ? { served: servedBusinesses(reach.live.current()) } : {}),
      config: settings.purchases,
      logger,
      taskQueue,
      ...(options.purchasesSyncOptions ? { syncOptions: options.purchasesSyncOptions } : {}),
    });
    metrics.knowBusinesses(
      'purchases',
      purchases.schedules.map((schedule) => schedule.businessId),
    );
    const reconciliation = await scheduleReconciliation({
      client: options.client,
      config: reach.reconciliation,
      logger,
      taskQueue,
    });
    metrics.knowBusinesses(
      'reconciliation',
      reach.reconciliation.links.map((link) => link.businessId),
    );
    logger.info(
      {
        taskQueue,
        queues: [workers.workflows, workers.compliance, workers.accounting].map((w) => w.options.taskQueue),
        ...reach.described,
        activitiesPerSecond: {
          compliance: Number(activitiesPerSecond.compliance.toFixed(3)),
          accounting: activitiesPerSecond.accounting,
        },
        callbacks: callbacks ? 'receiving' : 'polling only',
      },
      'workers ready',
    );
    /** After a change of the tenants file: budgets, then the schedules of what was added and removed. */
    const actOnTenantsChange = async (change: TenantsChange) => {
      const directory = reach.live!.current();
      await workers.serveWindowQueues((await holdBudgets(directory)).own);
      const reconciliationConfig = { ...settings.reconciliation, links: tenantLinks(directory) };
      const paused = {
        client: options.client,
        taskQueue,
        purchases: settings.purchases,
        reconciliation: reconciliationConfig,
        logger,
      };
      await setSchedulesPaused({ ...paused, businessIds: change.businessesRemoved, paused: true });
      const synced = await schedulePurchasesSync({
        client: options.client,
        services,
        served: servedBusinesses(directory),
        config: settings.purchases,
        logger,
        taskQueue,
        ...(options.purchasesSyncOptions ? { syncOptions: options.purchasesSyncOptions } : {}),
      });
      metrics.knowBusinesses(
        'purchases',
        synced.schedules.map((schedule) => schedule.businessId),
      );
      await scheduleReconciliation({ client: options.client, config: reconciliationConfig, logger, taskQueue });
      metrics.knowBusinesses(
        'reconciliation',
        reconciliationConfig.links.map((link) => link.businessId),
      );
      await setSchedulesPaused({ ...paused, businessIds: change.businessesAdded, paused: false });
    };
    return {
      workers,
      tenants: reach.live,
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
          ...(settings.worker.operatorWorkCountIntervalMs
            ? { intervalMs: settings.worker.operatorWorkCountIntervalMs }
            : {}),
        });
        const stopWatchingTenants =
          reach.live && options.tenantsReload && options.tenants
            ? watchTenants({
                live: reach.live,
                reload: options.tenantsReload,
                served: options.tenants,
                onChange: actOnTenantsChange,
                logger,
                metrics,
              })
            : undefined;
        try {
          await workers.run();
        } finally {
          stopWatching();
          await stopWatchingTenants?.();
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

/** How a process reaches the services, and what follows from it. */
interface ProcessReach {
  services: OpenServiceAccess;
  /** With tenants: the tenants served now. */
  live: LiveTenants | undefined;
  callbacks: CallbackServices;
  reconciliation: ReconciliationConfig;
  /** For `workers ready`: where the services are, never a key. */
  described: Record<string, unknown>;
}

function reachEndpoints(
  endpoints: Pick<ServiceEndpoints, 'compliance' | 'accounting'>,
  settings: WorkerProcessSettings,
  metrics: MetricsRecorder,
): ProcessReach {
  const complianceActivitiesPerSecond = settings.activitiesPerSecond.compliance;
  return {
    services: openServiceAccess(endpoints, {
      metrics: { recorder: metrics, complianceBudget: { activitiesPerSecond: complianceActivitiesPerSecond } },
    }),
    live: undefined,
    callbacks: endpointCallbackServices(endpoints),
    reconciliation: settings.reconciliation,
    described: { services: { compliance: endpoints.compliance.baseUrl, accounting: endpoints.accounting.baseUrl } },
  };
}

function servedBusinesses(directory: TenantDirectory): string[] {
  return directory.applications().flatMap((application) => application.businesses);
}

function tenantLinks(directory: TenantDirectory): ReconciliationConfig['links'] {
  return directory.links().map(({ businessId, companyId }) => ({ businessId, companyId }));
}

/**
 * The tenants resolved against the services (every key's identity and businesses), kept live so a changed tenants
 * file is served without a restart, and a ServiceAccess that routes each business to the application serving it.
 * Each application's requests are counted under its name as well as the fleet's.
 */
async function reachTenants(
  tenants: TenantsConfig,
  settings: WorkerProcessSettings,
  metrics: MetricsRecorder,
  logger: Logger,
): Promise<ProcessReach> {
  const fleet = complianceTrafficMetrics(metrics);
  const live = await openLiveTenants(tenants, {
    logger,
    observerFor: (application) => bothObservers(fleet, applicationRateMetrics(metrics, application.application)),
  });
  const directory = live.current();
  const applications = directory.applications();
  return {
    services: openTenantAccess(live),
    live,
    callbacks: tenantCallbackServices(tenants, logger),
    reconciliation: { ...settings.reconciliation, links: tenantLinks(directory) },
    described: {
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
      },
    },
  };
}

/** A worker process on its own Temporal connections, with its services. */
export interface ConnectedWorkerProcess {
  client: Client;
  services: ServiceEndpoints;
  worker: WorkerProcess;
  /** After worker.run() has returned: the worker process, the Temporal connections, then the services. */
  close(): Promise<void>;
}

/** A worker process serving a tenants file, on its own Temporal connections. */
export interface ConnectedTenantsWorkerProcess {
  client: Client;
  /** Which application serves which business, now (also `worker.tenants`). */
  tenants: LiveTenants;
  worker: WorkerProcess;
  /** After worker.run() has returned: the worker process (its clients with it), then the Temporal connections. */
  close(): Promise<void>;
}

export interface ConnectWorkerProcessOptions {
  /** Where Temporal is (default: settings.temporal). A local stack passes the dev server it started. */
  temporal?: TemporalSettings;
  /** The workflow queue (default `sales`); the service queues derive from it. */
  taskQueue?: string;
}

/** The Temporal side of a process, checked: reachable with these credentials and namespace, search attributes there. */
async function connectTemporal(
  settings: WorkerSettings,
  logger: Logger,
  temporal: TemporalSettings,
  opened: Array<() => Promise<unknown>>,
): Promise<{ client: Client; connection: NativeConnection; namespace: string }> {
  const { namespace } = temporal;
  const clientConnection = await connectClient(temporal);
  opened.push(() => clientConnection.close());
  const address = temporal.address ?? DEFAULT_TEMPORAL_ADDRESS;
  const searchAttributes = await requireSearchAttributes(clientConnection, {
    namespace,
    address,
    keys: projectSearchAttributes,
  });
  logger.info({ namespace, searchAttributes }, 'search attributes checked');
  const connection = await connectNative(temporal);
  opened.push(() => connection.close());
  const client = new Client({
    connection: clientConnection,
    namespace,
    dataConverter: settings.encryption.dataConverter,
    plugins: tracingPlugins(),
  });
  return { client, connection, namespace };
}

function logEncryption(settings: WorkerSettings, logger: Logger): void {
  const { encryption } = settings;
  logger.info(
    {
      payloadEncryption: encryption.encrypted ? `on, new payloads under key ${encryption.keyRing.encryptKeyId}` : 'off',
    },
    'payload encryption',
  );
}

/**
 * A worker process, checked before anything starts (its settings, services included, were checked when loaded):
 * Temporal
 * reachable with these credentials and namespace, the project's search attributes registered (or a
 * SearchAttributesError naming the command an administrator must run), each service's credentials accepted; only
 * then the callback receiver and the workers. A failure closes whatever was opened and throws an error that names
 * what failed and never a secret. Settings with tenants start with connectTenantsWorkerProcess.
 */
export async function connectWorkerProcess(
  settings: WorkerSettings,
  logger: Logger,
  options: ConnectWorkerProcessOptions = {},
): Promise<ConnectedWorkerProcess> {
  if (settings.tenants) {
    throw new ConfigError(
      `${settings.tenants.origin}: this entry point runs one key per service; a tenants file is served by the worker (npm run worker)`,
    );
  }
  logEncryption(settings, logger);
  const temporal = options.temporal ?? settings.temporal;
  return closingInOrder(async (opened) => {
    // The embedded sandbox, when asked for, first: where it is not installed that is the error to see, whatever
    // else is wrong.
    const services = await resolveServices(settings.services, logger);
    opened.push(() => services.close());
    const { client, connection, namespace } = await connectTemporal(settings, logger, temporal, opened);
    await checkServiceCredentials(services, logger);
    const { dataConverter } = settings.encryption;
    const worker = await startWorkerProcess({
      connection,
      client,
      namespace,
      services,
      settings,
      logger,
      dataConverter,
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    });
    return { client, services, worker };
  });
}

/**
 * Runs `start` with a list it adds what it opens to: a failure closes all of it (last opened first) and throws; the
 * result's close() closes the worker process, then all of it.
 */
async function closingInOrder<T extends { worker: WorkerProcess }>(
  start: (opened: Array<() => Promise<unknown>>) => Promise<T>,
): Promise<T & { close(): Promise<void> }> {
  const opened: Array<() => Promise<unknown>> = [];
  const closeOpened = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
  };
  try {
    const started = await start(opened);
    return {
      ...started,
      close: async () => {
        await started.worker.close();
        await closeOpened();
      },
    };
  } catch (err) {
    await closeOpened();
    throw err;
  }
}

/**
 * A worker process serving the tenants of TENANTS_FILE / TENANTS_DIR, checked as connectWorkerProcess checks: Temporal
 * and its search attributes, then every tenant's key (its identity and businesses; a refusal is a TenantConfigError,
 * a ConfigError naming the tenant entry, a service that cannot be asked a TenantServiceError), then the receiver and
 * the workers. No embedded sandbox stands in for anything.
 */
export async function connectTenantsWorkerProcess(
  settings: WorkerSettings & { tenants: TenantsConfig },
  logger: Logger,
  options: ConnectWorkerProcessOptions = {},
): Promise<ConnectedTenantsWorkerProcess> {
  logEncryption(settings, logger);
  return closingInOrder(async (opened) => {
    const { client, connection, namespace } = await connectTemporal(
      settings,
      logger,
      options.temporal ?? settings.temporal,
      opened,
    );
    const worker = await startWorkerProcess({
      connection,
      client,
      namespace,
      tenants: settings.tenants,
      ...(settings.tenantsReload ? { tenantsReload: settings.tenantsReload } : {}),
      settings,
      logger,
      dataConverter: settings.encryption.dataConverter,
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    });
    // Set whenever tenants are given.
    return { client, tenants: worker.tenants!, worker };
  });
}
