import { addAbortListener } from 'node:events';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Runtime, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { projectSearchAttributes } from '../contracts/search-attributes.js';
import { complianceTaskQueue, WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { watchOperatorWork } from '../metrics/operator-work.js';
import { createMetricsRecorder, type MetricsRecorder } from '../metrics/recorder.js';
import { parseRateLimit } from '../http/rate-limit.js';
import type { HttpObserver } from '../http/transport.js';
import { createSink } from '../purchases/event-sink.js';
import type { PurchaseEventSink } from '../purchases/event-sink.js';
import { resolveServices, type EmbeddedSandbox } from '../services/endpoints.js';
import { connectWorkerConnection, DEFAULT_TEMPORAL_ADDRESS, type TemporalSettings } from '../temporal/connection.js';
import { requireSearchAttributes } from '../temporal/ensure-search-attributes.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { openTenantAccess } from '../tenants/access.js';
import { holdTenantBudgets } from '../tenants/budget-windows.js';
import type { TenantDirectory } from '../tenants/directory.js';
import { openLiveTenants, type OutageRetry, type TenantsChange } from '../tenants/live.js';
import { ENVIRONMENT_ORIGIN, singleKeyTenants } from '../tenants/single-key.js';
import type { TenantsConfig } from '../tenants/types.js';
import { watchTenants, type TenantsReload } from '../tenants/watch.js';
import { SettledDocuments } from '../callbacks/settled-documents.js';
import { deploymentNameFor } from '../config/versioning.js';
import { firstStockIn } from '../config/stock-in.js';
import { startCallbacks } from './callbacks.js';
import { routeDeploymentVersion, type DeploymentVersion, type VersionRouting } from './deployment.js';
import { purchasesBusinessIds, scheduleServed, servedBusinesses, setSchedulesPaused } from './schedules.js';
import type { WorkerSettings } from './settings.js';
import { tenantChangeActor } from './tenant-changes.js';
import { tellSalesWaitingFor } from './waiting-sales.js';
import { createWorkers } from './workers.js';
import { watchQueueRegistration } from './queue-registration.js';
import { WindowQueues } from './window-queues.js';

/**
 * `stockReporting` absent: every business on the default (DEFAULT_STOCK_REPORTING). `stockIn` absent: only the
 * businesses a tenants file's `stockIn` names take stock in.
 */
export type WorkerProcessSettings = Pick<
  WorkerSettings,
  'worker' | 'activitiesPerSecond' | 'purchases' | 'reconciliation' | 'versioning'
> &
  Partial<Pick<WorkerSettings, 'stockReporting' | 'stockIn' | 'fiscalDay'>>;

export type WorkerProcess = Awaited<ReturnType<typeof startWorkerProcess>>;

/** connectWorkerProcess's second half, for callers that bring their own Temporal connections (tests, benchmark). */
export async function startWorkerProcess(options: {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  tenants: TenantsConfig;
  tenantsReload?: TenantsReload;
  settings: WorkerProcessSettings;
  logger: Logger;
  /** The workflow queue (default `sales`); the service queues derive from it. */
  taskQueue?: string;
  workflowBundle?: WorkflowBundle;
  /** The client given is expected to use the same. */
  dataConverter?: DataConverter;
  /** Default: the sink the settings name, opened here. */
  purchasesSink?: PurchaseEventSink;
  purchasesSyncOptions?: PurchasesSyncOptions;
  /** How a key whose service is down at start is asked again (default 5 s, doubling to 60 s). */
  outageRetry?: OutageRetry;
  /** What the caller opened before (connectWorkerProcess: the connection, the sandbox): closed after this process's. */
  resources?: Resources;
  /** Aborted: the process stops (shutdown() aborts it too). */
  stop?: AbortController;
}) {
  const { settings, logger, client, tenants } = options;
  const taskQueue = options.taskQueue ?? settings.worker.workflowTaskQueue ?? WORKFLOW_TASK_QUEUE;
  const metrics = createMetricsRecorder(Runtime.instance().metricMeter, { namespace: options.namespace, taskQueue });
  const version: DeploymentVersion = {
    deploymentName: settings.versioning.deploymentName ?? deploymentNameFor(taskQueue),
    buildId: settings.versioning.buildId,
  };
  metrics.set('etims_worker_build_info', 1, { deployment_name: version.deploymentName, build_id: version.buildId });
  // What every part of the process is handed whole: the workers, the budgets, the schedules, the checks.
  const context = { client, namespace: options.namespace, taskQueue, version, logger, metrics };
  const resources = options.resources ?? new Resources(logger);
  const close = () => resources.close();
  const changes = tenantChangeActor(logger);
  // Why: docs/tenancy.md, "A worker that starts during an outage".
  const live = await openLiveTenants(tenants, {
    logger,
    observerFor: (application) => complianceRateMetrics(metrics, application.application),
    awaitOutages: { ...options.outageRetry, onAwaitedServed: (change) => changes.later(change) },
  });
  const services = resources.own('service clients', openTenantAccess(live), (access) => access.close());
  // Read at each call: a reload of the tenants file changes its entries without a restart.
  const stockIn = firstStockIn(live.stockIn, settings.stockIn);
  // Its actions use the service clients: stopped before them.
  resources.own('tenant changes', changes, (actor) => actor.stop());
  const stopping = options.stop ?? new AbortController();
  try {
    // Before any worker polls: each application's calls are held to its own budget from the first one.
    const holdBudgets = () =>
      holdTenantBudgets({ ...context, directory: live.current(), headroom: settings.worker.complianceRateHeadroom });
    const queues = await holdBudgets();
    const activitiesPerSecond = {
      ...settings.activitiesPerSecond,
      compliance:
        queues.shared.queuePerSecond +
        awaitedPerSecond(tenants, live.current(), settings.worker.complianceRateHeadroom),
    };
    // At zero before the start-up sync counts (the bundle takes seconds): increase() counts the first sync from it.
    metrics.knowBusinesses(
      'purchases',
      purchasesBusinessIds(settings.purchases, servedBusinesses(live.current()), stockIn),
    );
    const settled = new SettledDocuments();
    const callbacks = await startCallbacks(settings.worker, tenants, client, logger, metrics, settled);
    if (callbacks) resources.own('callback receiver', callbacks.server, (server) => server.close());
    const purchasesSink = options.purchasesSink ?? (await createSink(settings.purchases.sink));
    if (purchasesSink) resources.own('purchases sink', purchasesSink, (sink) => sink.close());
    const workers = await createWorkers(context, {
      connection: options.connection,
      services,
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
      shutdownGraceMs: settings.worker.shutdownGraceMs,
      stop: stopping.signal,
      activitiesPerSecond,
      workflowBundle: options.workflowBundle,
      callbackUrls: callbacks?.minter,
      settledDocuments: settled,
      purchasesSink,
      stockReporting: settings.stockReporting,
      stockIn,
      fiscalDay: settings.fiscalDay,
    });
    const windows = new WindowQueues(workers, () => live.current(), taskQueue, logger, queues.own);
    await windows.serve();
    const registration = watchQueueRegistration({
      ...context,
      polled: () => windows.polled(),
      windowQueuePrefix: `${complianceTaskQueue(taskQueue)}.`,
      onStranded: (stranded) => windows.strand(stranded),
    });
    resources.own('queue registration check', registration, (watch) => watch.stop());
    const scheduling = { ...context, settings, stockIn, syncOptions: options.purchasesSyncOptions };
    const { purchases, reconciliation } = await scheduleServed(scheduling, live.current());
    logger.info(
      {
        taskQueue,
        queues: workers.queues,
        ...described(tenants, live.current()),
        activitiesPerSecond: {
          compliance: Number(activitiesPerSecond.compliance.toFixed(3)),
          accounting: activitiesPerSecond.accounting,
        },
        callbacks: callbacks ? 'receiving' : 'polling only',
        deployment: version,
      },
      'workers ready',
    );
    changes.begin(async (change: TenantsChange) => {
      await windows.serve((await holdBudgets()).own);
      const paused = { ...context, purchases: settings.purchases, stockIn };
      await setSchedulesPaused({ ...paused, businessIds: change.businessesRemoved, paused: true });
      await scheduleServed(scheduling, live.current());
      await setSchedulesPaused({ ...paused, businessIds: change.businessesAdded, paused: false });
      if (change.businessesAdded.length > 0)
        await tellSalesWaitingFor(client, taskQueue, change.businessesAdded, logger);
    });
    // Known once run() has begun: the server learns the version from the workers' polls.
    const routing = Promise.withResolvers<VersionRouting>();
    routing.promise.catch(() => undefined);
    // The receiver takes no new request and drains beside the workers, in the same grace: one grace bounds the stop.
    addAbortListener(stopping.signal, () => void callbacks?.server.close());
    const route = () =>
      routeDeploymentVersion({
        ...context,
        taskQueues: workers.queues,
        makeCurrent: settings.versioning.makeCurrent,
        rollBack: settings.versioning.rollBack ?? false,
        signal: stopping.signal,
      }).then(routing.resolve, (err: unknown) => {
        // Stopped before the server had answered: nothing to tell.
        logger[stopping.signal.aborted ? 'debug' : 'error'](
          { err: err instanceof Error ? err.message : String(err), ...version },
          'could not tell or set where new workflows go',
        );
        routing.reject(err);
      });
    return {
      workers,
      version,
      /** Queues this process polls that its version does not hold (refused by the server): readiness reads it. */
      queues: registration,
      /** Whether new workflows come to this build: settled once run() has begun and the server knows the version. */
      routing: routing.promise,
      tenants: live,
      // Undefined when polling only.
      callbacks: callbacks?.server,
      callbackUrls: callbacks?.minter,
      purchases,
      reconciliation,
      // Until shutdown(); rejects if a worker fails.
      run: async (): Promise<void> => {
        const stopWatching = watchOperatorWork({
          ...context,
          intervalMs: settings.worker.operatorWorkCountIntervalMs,
        });
        const stopWatchingTenants = options.tenantsReload
          ? watchTenants({
              live,
              reload: options.tenantsReload,
              served: tenants,
              onChange: (change) => changes.later(change),
              logger,
              metrics,
            })
          : undefined;
        try {
          const running = workers.run();
          void route();
          await running;
        } finally {
          stopWatching();
          await stopWatchingTenants?.();
          await changes.stop();
        }
      },
      /** From shutdown() on: readiness answers no at once. */
      get stopping(): boolean {
        return stopping.signal.aborted;
      },
      shutdown: () => stopping.abort(),
      // After run() has returned: the sink, the callback receiver, the service clients, then what the caller opened.
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Starts per second of the keys not answered yet: the workers' rate, set once at creation, must leave them room. */
function awaitedPerSecond(tenants: TenantsConfig, directory: TenantDirectory, headroom: number): number {
  const awaited = new Set(directory.awaited().map((entry) => entry.source));
  return tenants.compliance
    .filter((tenant) => awaited.has(tenant.source))
    .reduce((sum, tenant) => sum + (tenant.requestsPerMinute * (1 - headroom)) / 60, 0);
}

/** An application's requests, counted under its name as well as the fleet's; its budget gauge is set elsewhere. */
function complianceRateMetrics(metrics: MetricsRecorder, application: string): HttpObserver {
  return {
    requestSent: (request) => {
      metrics.count('etims_compliance_requests', { operation: request.operation });
      metrics.count('etims_application_requests', { application });
    },
    responseReceived: (response) => {
      if (response.status === 429) metrics.count('etims_application_rate_limited', { application });
      const left = parseRateLimit(response.headers).remaining;
      if (left === undefined) return;
      metrics.set('etims_compliance_rate_limit_remaining', left, {});
      metrics.set('etims_application_rate_limit_remaining', left, { application });
    },
  };
}

/** For `workers ready`: where the services are and what is served, never a key. */
function described(tenants: TenantsConfig, directory: TenantDirectory): Record<string, unknown> {
  const urls = (entries: ReadonlyArray<{ service: { baseUrl: string } }>) =>
    [...new Set(entries.map((entry) => entry.service.baseUrl))].join(', ');
  const awaited = directory.awaited().map((entry) => `${entry.service} ${entry.application}`);
  return {
    services: { compliance: urls(tenants.compliance), accounting: urls(tenants.accounting) },
    tenants: {
      origin: directory.origin,
      businesses: servedBusinesses(directory).length,
      compliance: directory.applications().map(({ application, businesses, requestsPerMinute }) => ({
        application,
        businesses: businesses.length,
        requestsPerMinute,
      })),
      accounting: directory
        .accountingApplications()
        .map(({ application, companies }) => ({ application, companies: companies.length })),
      links: directory.links().length,
      ...(awaited.length > 0 ? { awaited } : {}),
    },
  };
}

export type ConnectedWorkerProcess = Awaited<ReturnType<typeof connectWorkerProcess>>;

/** `temporal`: a local stack's dev server. Order of checks: docs/deployment.md, "Start-up that cannot half-work". */
export async function connectWorkerProcess(
  settings: WorkerSettings,
  logger: Logger,
  options: { temporal?: TemporalSettings; taskQueue?: string; resources?: Resources; stop?: AbortController } = {},
) {
  const { encryption, services } = settings;
  const payloadEncryption = encryption.encrypted
    ? `on, new payloads under key ${encryption.keyRing.encryptKeyId}`
    : 'off';
  logger.info({ payloadEncryption }, 'payload encryption');
  const resources = options.resources ?? new Resources(logger);
  try {
    let { tenants } = settings;
    let sandbox: EmbeddedSandbox | undefined;
    // The embedded sandbox in place of each service the single-key variables leave unconfigured.
    if (tenants.origin === ENVIRONMENT_ORIGIN && !(services.compliance && services.accounting)) {
      const endpoints = resources.own('services', await resolveServices(services, logger), (e) => e.close());
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
    const connection = resources.own('Temporal connection', await connectWorkerConnection(temporal), (c) => c.close());
    const searchAttributes = await requireSearchAttributes(connection, {
      namespace,
      address: temporal.address ?? DEFAULT_TEMPORAL_ADDRESS,
      keys: projectSearchAttributes,
    });
    logger.info({ namespace, searchAttributes }, 'search attributes checked');
    const client = new Client({
      connection,
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
      resources,
      ...(options.stop ? { stop: options.stop } : {}),
    });
    // After worker.run() has returned: the worker process, the Temporal connection, then the sandbox.
    return { client, worker, sandbox, close: () => resources.close() };
  } catch (err) {
    await resources.close();
    throw err;
  }
}

/**
 * What a worker process opened, closed once and newest first: what was opened later may use what was opened before
 * it (the receiver the client, the workers the connection), never the other way round.
 */
export class Resources {
  private readonly held: Array<{ name: string; close: () => unknown }> = [];

  constructor(private readonly logger?: Logger) {}

  /** `resource`, closed by `close` when the process closes. */
  own<T>(name: string, resource: T, close: (resource: T) => unknown): T {
    this.held.push({ name, close: () => close(resource) });
    return resource;
  }

  /** Each is closed whatever became of the others; a second call finds nothing left. */
  async close(): Promise<void> {
    for (let next = this.held.pop(); next !== undefined; next = this.held.pop()) {
      try {
        await next.close();
      } catch (err) {
        // A process that is stopping has nothing left to do about it.
        const reason = err instanceof Error ? err.message : String(err);
        this.logger?.debug({ resource: next.name, err: reason }, 'close failed');
      }
    }
  }
}
