import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { accountingWebhookPath } from '../../src/callbacks/accounting-webhooks.js';
import type { PayloadEncryption } from '../../src/codec/data-converter.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../../src/codec/server.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { localTemporalSettings, type TemporalSettings } from '../../src/temporal/connection.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { startProcessHealth } from '../../src/worker/health.js';
import { loadWorkerSettings, type WorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { startDevServer, type DevServer } from '../temporal-cli/dev-server.js';
import {
  LOCAL_MERCHANTS,
  localSandboxFixture,
  pointWebhooks,
  writeLocalTenantsFile,
  type LocalMerchant,
} from './local-tenants.js';
import { stackShape, type StackShape } from './stack-shape.js';
import type { Env } from '../../src/config/env.js';

export interface Stack {
  temporalAddress: string;
  /** The Temporal web UI, when this stack started the server. */
  uiUrl: string | undefined;
  /** The dev server's own Prometheus endpoint, when this stack started the server. */
  temporalMetricsUrl: string | undefined;
  /** The codec server the UI decodes payloads with, when this stack started the UI. */
  codecUrl: string | undefined;
  /** Where the local stack's own payload key is kept, when no key was configured. */
  payloadKeysFile: string | undefined;
  namespace: string;
  client: Client;
  /** What the worker was started with: the environment, with the local stack's defaults filled in. */
  settings: WorkerSettings;
  /** What the workers serve: the two local merchants, the environment's tenants file, or one key per service. */
  shape: StackShape['kind'];
  /** With one key per service: where each is (the embedded sandbox for those not configured). */
  services: ServiceUrls | undefined;
  /**
   * The two local merchants (each its compliance application, key, businesses and books), when the stack serves
   * them; their tenants file is `tenantsFile`.
   */
  merchants: readonly LocalMerchant[] | undefined;
  /** The tenants file the workers serve: the one the stack wrote for its merchants (removed at stop), or the environment's. */
  tenantsFile: string | undefined;
  /** The accounting applications whose webhooks reach the receiver at their own path (the local merchants' books). */
  webhooksReceived: readonly string[];
  /** The sandbox, with its inspector, when the stack started one (its merchants' world, or the embedded one). */
  sandbox: Sandbox | undefined;
  worker: WorkerProcess;
  /** Settles when the workers stop; rejects if one fails. */
  running: Promise<void>;
  stop(): Promise<void>;
}

type CodecServer = Awaited<ReturnType<typeof startCodecServer>>;

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Payload encryption of the local stack: the configured keys, or (none configured) a key of its own, created once
 * next to Temporal's state, so what the stack writes is encrypted like a deployment's and stays readable across
 * restarts. The sales CLI reads it with PAYLOAD_KEYS_FILE.
 */
function localPayloadKeys(env: Env): { env: Env; keysFile: string | undefined } {
  if (env.PAYLOAD_KEYS?.trim() || env.PAYLOAD_KEYS_FILE?.trim() || env.PAYLOAD_ENCRYPTION?.trim())
    return { env: {}, keysFile: undefined };
  const keysFile = resolve(REPO_ROOT, '.temporal/payload-keys');
  if (!existsSync(keysFile)) {
    mkdirSync(dirname(keysFile), { recursive: true });
    writeFileSync(keysFile, `local-1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  return { env: { PAYLOAD_KEYS_FILE: keysFile }, keysFile };
}

/** The usual port when free, any free one otherwise. */
async function startLocalCodecServer(env: Env, encryption: PayloadEncryption, logger: Logger): Promise<CodecServer> {
  const options = {
    ...codecServerOptionsFromEnv(env),
    codec: encryption.codec,
    logger: logger.child({ component: 'codec-server' }),
  };
  try {
    return await startCodecServer(options);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    return startCodecServer({ ...options, port: 0 });
  }
}

/** The usual ports when free, any free ones otherwise, so a second stack or a busy machine still starts. */
async function startLocalTemporal(options: {
  headless: boolean;
  dbFilename: string | undefined;
  namespace: string;
  uiCodecEndpoint: string | undefined;
  logger: Logger;
}): Promise<DevServer> {
  const base = {
    namespace: options.namespace,
    headless: options.headless,
    // The CLI would pick a port and not say which: a free one, printed by `npm start`.
    metricsPort: 0,
    ...(options.uiCodecEndpoint ? { uiCodecEndpoint: options.uiCodecEndpoint } : {}),
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
    logger: (msg: string) => options.logger.info({ component: 'temporal-dev-server' }, msg),
    ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
  };
  try {
    return await startDevServer({ ...base, port: 7233, ...(options.headless ? {} : { uiPort: 8233 }) });
  } catch (err) {
    if (!/cannot listen/.test((err as Error).message)) throw err;
    return startDevServer(base);
  }
}

/**
 * What the environment leaves unset, a local stack fills in so every piece runs, as settings a deployment could
 * give: its own payload key and supplier invoices to an NDJSON file.
 */
function localDefaults(env: Env, purchasesFile: string): { env: Env; keysFile: string | undefined } {
  const keys = localPayloadKeys(env);
  const defaults: Env = { ...keys.env };
  // Nobody is there to run `temporal worker deployment set-current-version`, and the stack runs one build at a time:
  // the one checked out now takes new work, an older one too.
  if (!env.WORKER_MAKE_CURRENT?.trim()) defaults.WORKER_MAKE_CURRENT = 'always';
  if (!env.PURCHASES_SINK?.trim()) {
    mkdirSync(dirname(purchasesFile), { recursive: true });
    defaults.PURCHASES_SINK = `file:${purchasesFile}`;
  }
  return { env: { ...env, ...defaults }, keysFile: keys.keysFile };
}

/**
 * With one key per service, the embedded sandbox for the services that are not configured, and with the
 * accounting sandbox, the demo business reconciled with the demo company it is linked to.
 */
async function singleKeyDefaults(env: Env): Promise<Env> {
  const defaults: Env = { SANDBOX: 'embedded' };
  if (env.RECONCILE_LINKS === undefined && !env.ACCOUNTING_BASE_URL?.trim()) {
    const { DEMO_RECONCILIATION_LINK } = await import('../../sandbox/accounting/default-fixture.js');
    defaults.RECONCILE_LINKS = `${DEMO_RECONCILIATION_LINK.businessId}=${DEMO_RECONCILIATION_LINK.companyId}`;
  }
  return { ...env, ...defaults };
}

/** Where each service is. */
interface ServiceUrls {
  compliance: { baseUrl: string };
  accounting: { baseUrl: string };
}

/** What a started worker process gives the stack, whichever way it was started. */
interface StartedWorker {
  client: Client;
  worker: WorkerProcess;
  services: ServiceUrls | undefined;
  sandbox: Sandbox | undefined;
  merchants: readonly LocalMerchant[] | undefined;
  tenantsFile: string | undefined;
  webhooksReceived: readonly string[];
  close(): Promise<void>;
}

/**
 * The two local merchants: the sandbox started here with their world, their tenants file written beside it, and a
 * worker serving it as a deployment serves a tenants file (WorkerProcess.start: no embedded sandbox, the
 * sandbox's URLs in the file as a real service's would be). Each merchant's books send their webhooks to their own
 * path of the receiver.
 */
async function startMerchants(
  env: Env,
  logger: Logger,
  temporal: () => Promise<TemporalSettings>,
  settle: (settings: WorkerSettings) => void,
): Promise<StartedWorker> {
  const sandbox = await startSandbox({
    logger: logger.child({ component: 'sandbox' }),
    fixture: localSandboxFixture(),
  });
  const dir = mkdtempSync(join(tmpdir(), 'etims-stack-'));
  const release = async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const tenantsFile = writeLocalTenantsFile(sandbox, dir);
    // The sandbox calls back on loopback: allowed here, as COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS allows it for a local service.
    const settings = loadWorkerSettings({
      ...env,
      TENANTS_FILE: tenantsFile,
      COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
    });
    settle(settings);
    const worker = await WorkerProcess.start(settings, { logger, temporal: await temporal() });
    let webhooksReceived: string[] = [];
    try {
      if (worker.callbacks)
        webhooksReceived = await pointWebhooks(sandbox, worker.callbacks.url, accountingWebhookPath);
    } catch (err) {
      await worker.close();
      throw err;
    }
    return {
      client: worker.client,
      worker,
      services: undefined,
      sandbox,
      merchants: Object.values(LOCAL_MERCHANTS),
      tenantsFile,
      webhooksReceived,
      close: async () => {
        await worker.close();
        await release();
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

/** The environment's tenants file, served as `npm run worker` serves it. */
async function startTenants(
  env: Env,
  logger: Logger,
  temporal: () => Promise<TemporalSettings>,
  settle: (settings: WorkerSettings) => void,
): Promise<StartedWorker> {
  const settings = loadWorkerSettings(env);
  settle(settings);
  const worker = await WorkerProcess.start(settings, { logger, temporal: await temporal() });
  const tenantsFile = env.TENANTS_FILE?.trim() || env.TENANTS_DIR?.trim();
  return {
    client: worker.client,
    worker,
    services: undefined,
    sandbox: undefined,
    merchants: undefined,
    tenantsFile,
    webhooksReceived: [],
    close: () => worker.close(),
  };
}

/** One key per service, the embedded sandbox for those not configured: the stack before tenants. */
async function startSingleKey(
  env: Env,
  logger: Logger,
  temporal: () => Promise<TemporalSettings>,
  settle: (settings: WorkerSettings) => void,
): Promise<StartedWorker> {
  const settings = loadWorkerSettings(await singleKeyDefaults(env));
  settle(settings);
  const worker = await WorkerProcess.start(settings, { logger, temporal: await temporal() });
  const { client } = worker;
  // The worker holds the embedded sandbox opaquely; this stack asked for it, so it knows it is the project's.
  const sandbox = worker.sandbox as Sandbox | undefined;
  const webhooksReceived: string[] = [];
  if (sandbox && settings.services.accounting === undefined && worker.callbacks) {
    // The accounting sandbox's signed webhooks reach this stack's receiver, as a dashboard setting would point them.
    const { DEMO_ACCOUNTING_APPLICATION_ID } = await import('../../sandbox/accounting/default-fixture.js');
    await sandbox.inspector.setAccountingWebhookEndpoint(
      DEMO_ACCOUNTING_APPLICATION_ID,
      `${worker.callbacks.url}/webhooks/accounting`,
    );
    webhooksReceived.push('default');
  }
  const url = (configured: { baseUrl: string } | undefined, embedded: string | undefined) => ({
    baseUrl: configured?.baseUrl ?? embedded ?? '',
  });
  const services = {
    compliance: url(settings.services.compliance, sandbox?.complianceUrl),
    accounting: url(settings.services.accounting, sandbox?.accountingUrl),
  };
  return {
    client,
    worker,
    services,
    sandbox,
    merchants: undefined,
    tenantsFile: undefined,
    webhooksReceived,
    close: () => worker.close(),
  };
}

/**
 * The whole product on one machine: a Temporal dev server (unless TEMPORAL_ADDRESS or a temporal.toml profile
 * names one), the callback receiver and the workers, serving (stackShape):
 * - with nothing of the single-key configuration set, two merchants on two keys, from a tenants file the stack
 *   writes for its own sandbox (local-tenants.ts);
 * - with TENANTS_FILE / TENANTS_DIR, that file's tenants;
 * - with any single-key setting (SANDBOX=embedded, COMPLIANCE_*, ACCOUNTING_*, RECONCILE_LINKS), one key per
 *   service, the embedded sandbox standing in for a service that is not configured.
 */
export async function startStack(options: {
  /** The environment the stack reads its settings from, as a worker would (its defaults fill in what is unset). */
  env: Env;
  logger: Logger;
  /** No web UI (the demo and tests). */
  headless?: boolean;
  /** Keep Temporal's state in a file (default .temporal/dev.db; `null` for in-memory). */
  dbFilename?: string | null;
  /** Where the purchases sync writes when PURCHASES_SINK is unset (default .temporal/purchases.ndjson). */
  purchasesFile?: string;
}): Promise<Stack> {
  const { logger } = options;
  const shape = stackShape(options.env);
  const local = localDefaults(options.env, options.purchasesFile ?? resolve(REPO_ROOT, '.temporal/purchases.ndjson'));
  let devServer: DevServer | undefined;
  let codecServer: CodecServer | undefined;
  let settings: WorkerSettings | undefined;
  // Temporal is started once the settings are read (a bad setting is said before a server starts), as before.
  const temporal = async (): Promise<TemporalSettings> => {
    const { encryption } = settings!;
    const configured = settings!.temporal;
    if (configured.address) return configured;
    const headless = options.headless ?? false;
    // The web UI decodes what the workers encrypted through the codec server, allowed for the UI's origin only.
    if (!headless && encryption.encrypted) codecServer = await startLocalCodecServer(local.env, encryption, logger);
    const dbFilename =
      options.dbFilename === null ? undefined : (options.dbFilename ?? resolve(REPO_ROOT, '.temporal/dev.db'));
    if (dbFilename) mkdirSync(dirname(dbFilename), { recursive: true });
    devServer = await startLocalTemporal({
      headless,
      dbFilename,
      namespace: configured.namespace,
      uiCodecEndpoint: codecServer?.url,
      logger,
    });
    if (devServer.uiUrl) {
      codecServer?.allowOrigin(devServer.uiUrl);
      codecServer?.allowOrigin(devServer.uiUrl.replace('//127.0.0.1:', '//localhost:'));
    }
    return localTemporalSettings(devServer.address, devServer.namespace);
  };
  const settle = (read: WorkerSettings) => {
    settings = read;
    installTemporalRuntime(logger, { metricsBindAddress: read.worker.metricsBindAddress });
  };
  const start = { merchants: startMerchants, tenants: startTenants, 'single-key': startSingleKey }[shape.kind];
  let started: StartedWorker;
  try {
    started = await start(local.env, logger, temporal, settle);
  } catch (err) {
    await devServer?.stop();
    await codecServer?.close();
    throw err;
  }
  const temporalSettings = devServer
    ? localTemporalSettings(devServer.address, devServer.namespace)
    : settings!.temporal;
  const { worker } = started;
  // HEALTH_BIND_ADDRESS, as `npm run worker` serves it.
  const health = await startProcessHealth(settings!.worker, logger).catch(async (err: unknown) => {
    await started.close();
    await devServer?.stop();
    await codecServer?.close();
    throw err;
  });
  health?.attach(worker);
  const running = worker.run();
  try {
    await worker.routing;
  } catch (err) {
    worker.shutdown();
    await running.catch(() => undefined);
    await started.close();
    await health?.close();
    await devServer?.stop();
    await codecServer?.close();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    temporalAddress: temporalSettings.address ?? '',
    uiUrl: devServer?.uiUrl,
    temporalMetricsUrl: devServer?.metricsUrl,
    codecUrl: codecServer?.url,
    payloadKeysFile: local.keysFile,
    namespace: temporalSettings.namespace,
    client: started.client,
    settings: settings!,
    shape: shape.kind,
    services: started.services,
    merchants: started.merchants,
    tenantsFile: started.tenantsFile,
    webhooksReceived: started.webhooksReceived,
    sandbox: started.sandbox,
    worker,
    running,
    stop: () =>
      (stopped ??= (async () => {
        worker.shutdown();
        await running.catch(() => undefined);
        await started.close();
        await health?.close();
        await devServer?.stop();
        await codecServer?.close();
      })()),
  };
}
