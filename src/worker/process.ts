// A worker process from settings to exit: what it opens goes on one stack, closed in reverse; one signal stops it.
import { addAbortListener } from 'node:events';
import { Client } from '@temporalio/client';
import { Runtime, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import { tellSalesWaitingFor } from '../client/parked-sales.js';
import type { CallbackServer } from '../callbacks/server.js';
import { startCallbacks } from '../callbacks/start.js';
import { SettledDocuments } from '../callbacks/settled-documents.js';
import type { CallbackUrlMinter } from '../callbacks/tokens.js';
import { firstStockIn } from '../config/stock-in.js';
import { deploymentVersionOf, type DeploymentVersion } from '../config/versioning.js';
import type { PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { projectSearchAttributes } from '../contracts/search-attributes.js';
import { complianceTaskQueue, WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { createLogger } from '../logger.js';
import { complianceRequestMetrics } from '../metrics/compliance-requests.js';
import { watchOperatorWork } from '../metrics/operator-work.js';
import { createMetricsRecorder, type MetricsRecorder } from '../metrics/recorder.js';
import { createSink, type PurchaseEventSink } from '../purchases/event-sink.js';
import { purchasesBusinessIds, scheduleServed, setSchedulesPaused } from '../purchases/served-schedules.js';
import { resolveServices, type EmbeddedSandbox } from '../services/endpoints.js';
import { connectWorkerConnection, DEFAULT_TEMPORAL_ADDRESS, type TemporalSettings } from '../temporal/connection.js';
import { requireSearchAttributes } from '../temporal/ensure-search-attributes.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { installTracing, tracingPlugins } from '../temporal/tracing.js';
import { openTenantAccess } from '../tenants/access.js';
import { awaitedPerSecond, holdTenantBudgets } from '../tenants/budget-windows.js';
import { tenantChangeActor } from '../tenants/changes.js';
import { describeTenants } from '../tenants/directory.js';
import { openLiveTenants, type LiveTenants, type OutageRetry, type TenantsChange } from '../tenants/live.js';
import { ENVIRONMENT_ORIGIN, singleKeyTenants } from '../tenants/single-key.js';
import type { TenantsConfig } from '../tenants/types.js';
import { watchTenants } from '../tenants/watch.js';
import { routeDeploymentVersion, type VersionRouting } from './deployment.js';
import { startProcessHealth } from './health.js';
import { watchQueueRegistration, type QueueRegistration } from './queue-registration.js';
import type { WorkerSettings } from './settings.js';
import { WindowQueues } from './window-queues.js';
import { createWorkers, SHUTDOWN_FORCE_AFTER_GRACE_MS, type WorkerContext, type Workers } from './workers.js';

/**
 * After the grace, what the process has left before it exits: the SDK's forced stop (SHUTDOWN_FORCE_AFTER_GRACE_MS
 * past the grace, well within this), closing its connections and flushing its traces. A pod's
 * terminationGracePeriodSeconds must leave at least this beyond SHUTDOWN_GRACE_TIME (docs/deployment.md, "Health and
 * shutdown").
 */
export const EXIT_MARGIN_MS = SHUTDOWN_FORCE_AFTER_GRACE_MS + 3_000;

/** How soon a worker started by an npm script sees that script's shell gone (reparented, its parent id changes). */
const PARENT_CHECK_MS = 1_000;

/**
 * What a process that brings its own Temporal client needs of the settings. `stockReporting` absent: every business on
 * the default (DEFAULT_STOCK_REPORTING). `stockIn` absent: only the businesses a tenants file's `stockIn` names.
 */
export type WorkerProcessSettings = Pick<
  WorkerSettings,
  'worker' | 'activitiesPerSecond' | 'purchases' | 'reconciliation' | 'versioning'
> &
  Partial<Pick<WorkerSettings, 'stockReporting' | 'stockIn' | 'fiscalDay' | 'tenantsReload'>>;

/** What a caller may hand in (tests, benchmarks, the local stack) in place of what open() makes from the settings. */
export interface WorkerProcessOptions {
  logger?: Logger;
  /** The process's own: SIGTERM / SIGINT stop it, and open() installs the runtime, tracing and health probes first. */
  main?: boolean;
  /** A local stack's dev server in place of the settings'. */
  temporal?: TemporalSettings;
  /** The workflow queue (default `sales`); the service queues derive from it. */
  taskQueue?: string;
  workflowBundle?: WorkflowBundle;
  /** Default: the sink the settings name, opened here. */
  purchasesSink?: PurchaseEventSink;
  purchasesSyncOptions?: PurchasesSyncOptions;
  /** How a key whose service is down at start is asked again (default 5 s, doubling to 60 s). */
  outageRetry?: OutageRetry;
}

/** A connection and client the caller opened (and closes after this process), and the tenants to serve. */
interface BroughtTemporal {
  connection: NativeConnection;
  /** The workers use its data converter. */
  client: Client;
  tenants: TenantsConfig;
}

/** Without a client brought, the settings are whole: the process connects, and may start the embedded sandbox. */
type Opening =
  | [settings: WorkerSettings, options?: WorkerProcessOptions]
  | [settings: WorkerProcessSettings, options: WorkerProcessOptions & { brought: BroughtTemporal }];

/**
 * One worker process: open() opens it in order onto one stack, run() serves until the stop, close() closes the stack
 * in reverse. One AbortController is its stop, and what must stop listens to its signal: the workers, the callback
 * receiver, the version routing.
 */
export class WorkerProcess {
  readonly logger: Logger;
  private readonly settings: WorkerProcessSettings;
  private readonly options: WorkerProcessOptions & { brought?: BroughtTemporal };
  /**
   * What it opened, closed newest first, each whatever became of the others: what opened later may use what opened
   * before it (the receiver the client, the workers the connection), never the other way round.
   */
  private readonly resources = new AsyncDisposableStack();
  private readonly stop = new AbortController();
  private readonly changes: ReturnType<typeof tenantChangeActor>;
  private readonly routed = Promise.withResolvers<VersionRouting>();
  private context: (WorkerContext & { metrics: MetricsRecorder }) | undefined;
  /** The tenants served at start, the sandbox's in place of what the settings leave unconfigured. */
  private served: TenantsConfig | undefined;

  // Known once open() has returned.
  client!: Client;
  /** The embedded sandbox, when the settings leave a service unconfigured. */
  sandbox: EmbeddedSandbox | undefined;
  workers!: Workers;
  version!: DeploymentVersion;
  tenants!: LiveTenants;
  /** Queues this process polls that its version does not hold (refused by the server): readiness reads it. */
  queues!: QueueRegistration;
  /** Whether new workflows come to this build: settled once run() has begun and the server knows the version. */
  readonly routing = this.routed.promise;
  /** Undefined when polling only. */
  callbacks: CallbackServer | undefined;
  callbackUrls: CallbackUrlMinter | undefined;
  purchases!: Awaited<ReturnType<typeof scheduleServed>>['purchases'];
  reconciliation!: Awaited<ReturnType<typeof scheduleServed>>['reconciliation'];

  constructor(...[settings, options = {}]: Opening) {
    this.settings = settings;
    this.options = options;
    this.logger =
      options.logger ??
      createLogger({ level: 'services' in settings ? settings.services.logLevel : 'info', name: 'worker' });
    this.changes = tenantChangeActor(this.logger);
    this.routing.catch(() => undefined);
  }

  /** Opened, or closed again if it could not be: for callers without the entry point's finally. */
  static async start(...opening: Opening): Promise<WorkerProcess> {
    const worker = new WorkerProcess(...opening);
    try {
      await worker.open();
      return worker;
    } catch (err) {
      await worker.close();
      throw err;
    }
  }

  /** From shutdown() on: readiness answers no at once. */
  get stopping(): boolean {
    return this.stop.signal.aborted;
  }

  /** No new task; those running get the grace. */
  shutdown(): void {
    this.stop.abort();
  }

  /**
   * Each thing onto the stack as it opens. A main process serves health first, so it is live while its start-up checks
   * take their time and ready only once its workers poll. False when a stop came meanwhile: nothing to drain.
   */
  async open(): Promise<boolean> {
    const { settings, logger, resources, options } = this;
    const health = options.main ? await this.openMain(settings as WorkerSettings) : undefined;
    const { connection, client, tenants } = options.brought ?? (await this.connect(settings as WorkerSettings));
    this.client = client;
    this.served = tenants;
    const taskQueue = options.taskQueue ?? settings.worker.workflowTaskQueue ?? WORKFLOW_TASK_QUEUE;
    const { namespace } = client.options;
    const metrics = createMetricsRecorder(Runtime.instance().metricMeter, { namespace, taskQueue });
    const version = (this.version = deploymentVersionOf(settings.versioning, taskQueue));
    metrics.set('etims_worker_build_info', 1, { deployment_name: version.deploymentName, build_id: version.buildId });
    const { changes } = this;
    // Why: docs/tenancy.md, "A worker that starts during an outage".
    const live = (this.tenants = await openLiveTenants(tenants, {
      logger,
      observerFor: (application) => complianceRequestMetrics(metrics, application.application),
      awaitOutages: { ...options.outageRetry, onAwaitedServed: (change) => changes.later(change) },
    }));
    const services = resources.adopt(openTenantAccess(live), (access) => access.close());
    const context = (this.context = { client, namespace, taskQueue, version, logger, metrics, services });
    // Read at each call: a reload of the tenants file changes its entries without a restart.
    const stockIn = firstStockIn(live.stockIn, settings.stockIn);
    // Its actions use the service clients: stopped before them.
    resources.adopt(changes, (actor) => actor.stop());
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
    metrics.knowBusinesses('purchases', purchasesBusinessIds(settings.purchases, live.current().businesses(), stockIn));
    const settledDocuments = new SettledDocuments();
    const callbacks = await startCallbacks(context, settings.worker, tenants, settledDocuments);
    if (callbacks) resources.adopt(callbacks.server, (server) => server.close());
    this.callbacks = callbacks?.server;
    this.callbackUrls = callbacks?.minter;
    // The receiver takes no new request and drains beside the workers, in the same grace: one grace bounds the stop.
    addAbortListener(this.stop.signal, () => void callbacks?.server.close());
    const purchasesSink = options.purchasesSink ?? (await createSink(settings.purchases.sink));
    if (purchasesSink) resources.adopt(purchasesSink, (sink) => sink.close());
    const workers = (this.workers = await createWorkers(context, {
      connection,
      signal: this.stop.signal,
      activitiesPerSecond,
      shutdownGraceMs: settings.worker.shutdownGraceMs,
      workflowBundle: options.workflowBundle,
      activities: {
        callbackUrls: callbacks?.minter,
        settledDocuments,
        purchasesSink,
        stockReporting: settings.stockReporting,
        stockIn,
        ...(settings.fiscalDay ? { fiscalDay: settings.fiscalDay } : {}),
      },
    }));
    const windows = new WindowQueues(workers, () => live.current(), taskQueue, logger, queues.own);
    await windows.serve();
    this.queues = resources.adopt(
      watchQueueRegistration({
        ...context,
        polled: () => windows.polled(),
        windowQueuePrefix: `${complianceTaskQueue(taskQueue)}.`,
        onStranded: (stranded) => windows.strand(stranded),
      }),
      (watch) => watch.stop(),
    );
    const { purchases, reconciliation } = settings;
    const scheduling = { ...context, purchases, reconciliation, stockIn, syncOptions: options.purchasesSyncOptions };
    ({ purchases: this.purchases, reconciliation: this.reconciliation } = await scheduleServed(
      scheduling,
      live.current(),
    ));
    logger.info(
      {
        taskQueue,
        queues: workers.queues,
        ...describeTenants(tenants, live.current()),
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
      await setSchedulesPaused({ ...scheduling, businessIds: change.businessesRemoved, paused: true });
      await scheduleServed(scheduling, live.current());
      await setSchedulesPaused({ ...scheduling, businessIds: change.businessesAdded, paused: false });
      if (change.businessesAdded.length > 0)
        await tellSalesWaitingFor(client, taskQueue, change.businessesAdded, logger);
    });
    health?.attach(this);
    if (!options.main || this.stopping) return !this.stopping;
    const { temporal } = settings as WorkerSettings;
    logger.info(
      {
        address: temporal.address ?? DEFAULT_TEMPORAL_ADDRESS,
        namespace,
        profile: temporal.profile,
        tls: Boolean(temporal.tls),
        tenants: (settings as WorkerSettings).tenants.origin,
        sandbox: this.sandbox ? 'embedded' : 'none',
      },
      'worker running',
    );
    return true;
  }

  /** Until shutdown() (or a signal); rejects if a worker fails. */
  async run(): Promise<void> {
    const { context, settings, logger, changes } = this;
    if (!context) throw new Error('the worker process runs once opened');
    const stopWatching = watchOperatorWork({ ...context, intervalMs: settings.worker.operatorWorkCountIntervalMs });
    const stopWatchingTenants = settings.tenantsReload
      ? watchTenants({
          live: this.tenants,
          reload: settings.tenantsReload,
          served: this.served!,
          onChange: (change) => changes.later(change),
          logger,
          metrics: context.metrics,
        })
      : undefined;
    try {
      const running = this.workers.run();
      // Known once the workers poll: the server learns the version from their polls.
      const { makeCurrent, rollBack = false } = settings.versioning;
      const signal = this.stop.signal;
      routeDeploymentVersion({ ...context, taskQueues: this.workers.queues, makeCurrent, rollBack, signal }).then(
        this.routed.resolve,
        (err: unknown) => {
          // Stopped before the server had answered: nothing to tell.
          logger[this.stopping ? 'debug' : 'error'](
            { err: err instanceof Error ? err.message : String(err), ...this.version },
            'could not tell or set where new workflows go',
          );
          this.routed.reject(err);
        },
      );
      await running;
    } finally {
      stopWatching();
      await stopWatchingTenants?.();
      await changes.stop();
    }
  }

  /** Everything opened, newest first, whatever failed; then what the caller brought is theirs to close. */
  async close(): Promise<void> {
    // A process that is stopping has nothing left to do about a close that failed but say so.
    await this.resources
      .disposeAsync()
      .catch((err: unknown) => this.logger.debug({ errs: failures(err) }, 'close failed'));
  }

  /**
   * SIGTERM / SIGINT: at once not ready, no new task, the running ones given SHUTDOWN_GRACE_TIME, and an exit bounded
   * whatever happens, before the orchestrator's SIGKILL. Listened to before anything opens, so a signal during the
   * start-up stops it too, within the same bound; so does the end of the npm script that started it. Then the runtime,
   * tracing and the health probes.
   */
  private async openMain(settings: WorkerSettings) {
    const { logger, resources } = this;
    const graceSeconds = settings.worker.shutdownGraceMs / 1000;
    const stop = (why: Record<string, unknown>) => {
      if (this.stopping) return logger.info(why, 'already shutting down');
      logger.info({ ...why, graceSeconds }, 'shutting down: finishing in-flight tasks');
      this.shutdown();
      setTimeout(
        () => {
          logger.error({ graceSeconds }, 'shutdown did not finish within its grace: exiting');
          process.exit(1);
        },
        graceSeconds * 1000 + EXIT_MARGIN_MS,
      ).unref();
    };
    // `on`, not `once`: a terminal's Ctrl+C reaches the process from its group and again relayed by what runs it (npm),
    // and a second signal without a listener would kill the process in the middle of its drain.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop({ signal }));
    if (settings.stopsWithParent) {
      const parent = process.ppid;
      const watch = setInterval(() => {
        if (process.ppid === parent) return;
        clearInterval(watch);
        stop({ parent, reason: 'the npm script that started the worker ended' });
      }, PARENT_CHECK_MS);
      watch.unref();
      resources.adopt(watch, clearInterval);
    }
    installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
    const tracing = await installTracing({ settings: settings.tracing, logger });
    if (tracing) resources.adopt(tracing, (t) => t.shutdown());
    const health = await startProcessHealth(settings.worker, logger);
    return health && resources.adopt(health, (h) => h.close());
  }

  /** Order of checks: docs/deployment.md, "Start-up that cannot half-work". */
  private async connect(settings: WorkerSettings): Promise<BroughtTemporal> {
    const { logger, resources } = this;
    const { encryption, services } = settings;
    const payloadEncryption = encryption.encrypted
      ? `on, new payloads under key ${encryption.keyRing.encryptKeyId}`
      : 'off';
    logger.info({ payloadEncryption }, 'payload encryption');
    let { tenants } = settings;
    // The embedded sandbox in place of each service the single-key variables leave unconfigured.
    if (tenants.origin === ENVIRONMENT_ORIGIN && !(services.compliance && services.accounting)) {
      const endpoints = resources.adopt(await resolveServices(services, logger), (e) => e.close());
      const configured = tenants.compliance[0];
      tenants = singleKeyTenants(endpoints, {
        requestsPerMinute: configured?.requestsPerMinute ?? settings.worker.complianceRequestsPerMinute,
        // The sandbox's key serves every business of its world; a configured key what COMPLIANCE_BUSINESS_ID says.
        businesses: configured?.businesses,
        links: tenants.links,
      });
      this.sandbox = endpoints.sandbox;
    }
    const temporal = this.options.temporal ?? settings.temporal;
    const { namespace } = temporal;
    const connection = resources.adopt(await connectWorkerConnection(temporal), (c) => c.close());
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
    return { connection, client, tenants };
  }
}

/**
 * Each close that failed, in the order they failed (newest resource first): the stack wraps a later failure and the
 * ones before it in one SuppressedError.
 */
function failures(err: unknown): string[] {
  if (err instanceof SuppressedError) return [...failures(err.suppressed), ...failures(err.error)];
  return [err instanceof Error ? err.message : String(err)];
}
