import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Runtime, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import { startCallbackServer, type CallbackServer } from '../callbacks/server.js';
import { CallbackUrlMinter } from '../callbacks/tokens.js';
import { payloadEncryptionFromEnv, type PayloadEncryption } from '../codec/data-converter.js';
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import { loadAccountingWorkerConfig } from '../config/accounting-worker.js';
import type { AppConfig } from '../config/env.js';
import { loadPurchasesConfig, type PurchasesConfig } from '../config/purchases.js';
import { complianceActivitiesPerSecond, type WorkerConfig } from '../config/worker.js';
import { assertServicesConfigured, checkServiceCredentials, resolveServices, type ServiceEndpoints } from '../services/endpoints.js';
import { connectClient, connectNative, DEFAULT_TEMPORAL_ADDRESS, type TemporalSettings } from '../temporal/connection.js';
import { requireSearchAttributes } from '../temporal/ensure-search-attributes.js';
import { projectSearchAttributes } from '../contracts/search-attributes.js';
import { RateLimitGate } from '../http/rate-limit-gate.js';
import { complianceRateBudgetMetrics } from '../temporal/rate-budget-metrics.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { createSaleWorkers, type SaleWorkers } from './workers.js';
import { createSink } from '../purchases/sink.js';
import type { EnsuredSchedule } from '../reconciliation/schedule.js';
import { checkReconciliationLinks, loadReconciliationConfig, startReconciliation, type ReconciliationConfig } from '../reconciliation/start.js';
import { startPurchasesSync, type PurchasesSetup, type PurchasesSyncStatus } from '../purchases/start.js';
import { SALE_TASK_QUEUE, complianceTaskQueue } from '../contracts/task-queues.js';

/** Longest wait for the compliance service's rate-limit window to reset before a call is handed back to Temporal. */
const RATE_LIMIT_HOLD_MS = 10_000;

export interface SaleService {
  workers: SaleWorkers;
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
  /** Releases the HTTP clients and the callback server after run() has returned. */
  close(): Promise<void>;
}

/**
 * Where result callbacks go: the configured public base URL, or, when the compliance service is a local
 * sandbox that can reach loopback, a receiver on this machine. Otherwise none, and the workflows poll.
 */
async function startCallbacks(
  config: WorkerConfig,
  services: ServiceEndpoints,
  client: Client,
  logger: Logger,
): Promise<{ server: CallbackServer; minter: CallbackUrlMinter } | undefined> {
  // CALLBACK_TOKEN_TTL and CALLBACK_LEGACY_TOKENS_UNTIL, for every minter and verifier below.
  const lifetime = {
    ttlMs: config.callbackTokenTtlMs,
    ...(config.callbackLegacyTokensUntilMs === undefined ? {} : { legacyTokensUntilMs: config.callbackLegacyTokensUntilMs }),
  };
  // Accounting webhooks (POST /webhooks/accounting) are received beside the result callbacks.
  const { webhookSecret } = services.accounting;
  const webhooks = webhookSecret ? { accountingWebhookSecret: webhookSecret } : {};
  if (config.callbackPublicBaseUrl && config.callbackSecret) {
    const minter = new CallbackUrlMinter({ publicBaseUrl: config.callbackPublicBaseUrl, secret: config.callbackSecret, ...lifetime });
    const server = await startCallbackServer({ host: config.callbackHost, port: config.callbackPort, minter, client, logger, metrics: Runtime.instance().metricMeter, ...webhooks });
    return { server, minter };
  }
  if (!services.compliance.allowLoopbackCallbacks) return undefined;
  // A fresh secret per process: URLs minted before a restart stop verifying, and polling covers those sales.
  const secret = randomBytes(32).toString('base64url');
  const server = await startCallbackServer({
    host: '127.0.0.1',
    minter: new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret, ...lifetime }),
    client,
    logger,
    metrics: Runtime.instance().metricMeter,
    ...webhooks,
  });
  return { server, minter: new CallbackUrlMinter({ publicBaseUrl: server.url, secret, ...lifetime }) };
}

/** The worker side of the product: callback receiver, compliance client and the two workers. */
export async function startSaleService(options: {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  services: ServiceEndpoints;
  config: WorkerConfig;
  logger: Logger;
  taskQueue?: string;
  /** A bundle built ahead of time (default: bundle the workflow sources at start). */
  workflowBundle?: WorkflowBundle;
  /** Payload encryption of the workers (the client given is expected to use the same). */
  dataConverter?: DataConverter;
  /** The purchases sync (default: as PURCHASES_* configure it). */
  purchases?: PurchasesSetup;
  /** Businesses reconciled on a schedule (default: as RECONCILE_LINKS / RECONCILE_EVERY configure it). */
  reconciliation?: ReconciliationConfig;
}): Promise<SaleService> {
  const { config, services, logger } = options;
  const purchasesConfig = options.purchases?.config ?? loadPurchasesConfig(process.env);
  const reconciliationConfig = options.reconciliation ?? loadReconciliationConfig(process.env);
  const { activitiesPerSecond: accountingActivitiesPerSecond } = loadAccountingWorkerConfig(process.env);
  const perSecond = complianceActivitiesPerSecond(config);
  const observer = complianceRateBudgetMetrics(Runtime.instance().metricMeter, {
    taskQueue: complianceTaskQueue(options.taskQueue ?? SALE_TASK_QUEUE),
    activitiesPerSecond: perSecond,
  });
  // Every compliance call of this process goes through one gate: the service's headers say what is left. A reset
  // a few seconds away is waited for, so the slot the queue's rate limit gave the call is not wasted.
  const rateLimitGate = new RateLimitGate({ holdUpToMs: RATE_LIMIT_HOLD_MS });
  const compliance = new ComplianceClient({ ...services.compliance, observer, rateLimitGate });
  const accounting = new AccountingClient(services.accounting);
  try {
    // A wrong link is configuration: refused before anything is started.
    await checkReconciliationLinks({ compliance, accounting }, reconciliationConfig);
  } catch (err) {
    await Promise.all([compliance.close(), accounting.close()]);
    throw err;
  }
  const callbacks = await startCallbacks(config, services, options.client, logger);
  const purchasesSink = options.purchases?.sink ?? (await createSink(purchasesConfig.sink));
  const workers = await createSaleWorkers({
    connection: options.connection,
    namespace: options.namespace,
    client: options.client,
    compliance,
    logger,
    complianceActivitiesPerSecond: perSecond,
    accounting,
    accountingActivitiesPerSecond,
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    ...(callbacks ? { callbackUrls: callbacks.minter } : {}),
    ...(purchasesSink ? { purchasesSink } : {}),
  });
  const purchases = await startPurchasesSync({
    client: options.client,
    compliance,
    config: purchasesConfig,
    logger,
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    ...(options.purchases?.syncOptions ? { syncOptions: options.purchases.syncOptions } : {}),
  });
  const reconciliation = await startReconciliation({
    client: options.client,
    config: reconciliationConfig,
    logger,
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
  });
  logger.info(
    { complianceActivitiesPerSecond: Number(perSecond.toFixed(3)), callbacks: callbacks ? 'receiving' : 'polling only' },
    'sale workers ready',
  );
  return {
    workers,
    callbacks: callbacks?.server,
    callbackUrls: callbacks?.minter,
    purchases,
    reconciliation,
    run: () => workers.run(),
    shutdown: () => workers.shutdown(),
    close: async () => {
      await callbacks?.server.close();
      await compliance.close();
      await accounting.close();
      await purchasesSink?.close();
    },
  };
}

/** A sale service on its own Temporal connections, with its services: what a worker process runs. */
export interface ConnectedSaleService {
  client: Client;
  services: ServiceEndpoints;
  sale: SaleService;
  /** After sale.run() has returned: the sale service, the Temporal connections, then the services. */
  close(): Promise<void>;
}

/**
 * What a worker process runs, checked before anything starts: the services configured (or SANDBOX=embedded),
 * Temporal reachable with these credentials and namespace, the project's search attributes registered (or
 * a SearchAttributesError naming the command an administrator must run), each service's credentials
 * accepted; only then the callback receiver and the workers. A failure closes whatever was opened and throws
 * an error that names what failed and never a secret.
 */
export async function connectSaleService(options: {
  config: AppConfig;
  workerConfig: WorkerConfig;
  logger: Logger;
  /** Where Temporal is (default: workerConfig.temporal, i.e. the environment and temporal.toml). */
  temporal?: TemporalSettings;
  /** Payload encryption (default: as the environment configures it, keys required unless PAYLOAD_ENCRYPTION=off). */
  encryption?: PayloadEncryption;
  /** The purchases sync (default: as PURCHASES_* configure it). */
  purchases?: PurchasesConfig;
  /** The reconciliation schedules (default: as RECONCILE_LINKS / RECONCILE_EVERY configure them). */
  reconciliation?: ReconciliationConfig;
}): Promise<ConnectedSaleService> {
  const { workerConfig, logger } = options;
  // First: a missing or malformed key is a configuration error before anything is contacted.
  const encryption = options.encryption ?? payloadEncryptionFromEnv(process.env);
  logger.info({ payloadEncryption: encryption.encrypted ? `on, new payloads under key ${encryption.keyRing.encryptKeyId}` : 'off' }, 'payload encryption');
  const temporal = options.temporal ?? workerConfig.temporal;
  const namespace = temporal.namespace;
  assertServicesConfigured(options.config);
  const purchases = options.purchases ?? loadPurchasesConfig(process.env);
  const reconciliation = options.reconciliation ?? loadReconciliationConfig(process.env);
  const opened: Array<() => Promise<unknown>> = [];
  const closeOpened = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
  };
  try {
    const clientConnection = await connectClient(temporal);
    opened.push(() => clientConnection.close());
    const address = temporal.address ?? DEFAULT_TEMPORAL_ADDRESS;
    const searchAttributes = await requireSearchAttributes(clientConnection, { namespace, address, keys: projectSearchAttributes });
    logger.info({ namespace, searchAttributes }, 'search attributes checked');
    const connection = await connectNative(temporal);
    opened.push(() => connection.close());
    const services = await resolveServices(options.config, logger);
    opened.push(() => services.close());
    await checkServiceCredentials(services, logger);
    const { dataConverter } = encryption;
    const client = new Client({ connection: clientConnection, namespace, dataConverter, plugins: tracingPlugins() });
    const sale = await startSaleService({ connection, client, namespace, services, config: workerConfig, logger, dataConverter, purchases: { config: purchases }, reconciliation });
    return {
      client,
      services,
      sale,
      close: async () => {
        await sale.close();
        await closeOpened();
      },
    };
  } catch (err) {
    await closeOpened();
    throw err;
  }
}
