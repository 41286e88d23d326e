import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { PayloadEncryption } from '../../src/codec/data-converter.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../../src/codec/server.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';
import type { ServiceEndpoints } from '../../src/services/endpoints.js';
import type { Sandbox } from '../../sandbox/server.js';
import { localTemporalSettings } from '../../src/temporal/connection.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { loadWorkerSettings, type WorkerSettings } from '../../src/worker/settings.js';
import { connectWorkerProcess, type WorkerProcess } from '../../src/worker/start.js';
import { startDevServer, type DevServer } from '../temporal-cli/dev-server.js';

type Env = Record<string, string | undefined>;

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
  services: ServiceEndpoints;
  /** The embedded sandbox, with its inspector, when a service is left to it. */
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
  if (env.PAYLOAD_KEYS?.trim() || env.PAYLOAD_KEYS_FILE?.trim() || env.PAYLOAD_ENCRYPTION?.trim()) return { env: {}, keysFile: undefined };
  const keysFile = resolve(REPO_ROOT, '.temporal/payload-keys');
  if (!existsSync(keysFile)) {
    mkdirSync(dirname(keysFile), { recursive: true });
    writeFileSync(keysFile, `local-1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  return { env: { PAYLOAD_KEYS_FILE: keysFile }, keysFile };
}

/** The usual port when free, any free one otherwise. */
async function startLocalCodecServer(env: Env, encryption: PayloadEncryption, logger: Logger): Promise<CodecServer> {
  const options = { ...codecServerOptionsFromEnv(env), codec: encryption.codec, logger: logger.child({ component: 'codec-server' }) };
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
 * give: the embedded sandbox for the services that are not configured, its own payload key, supplier invoices to an
 * NDJSON file, and with the accounting sandbox, the demo business reconciled with the demo company it is linked to.
 */
async function localDefaults(env: Env, purchasesFile: string): Promise<{ env: Env; keysFile: string | undefined }> {
  const keys = localPayloadKeys(env);
  const defaults: Env = { SANDBOX: 'embedded', ...keys.env };
  if (!env.PURCHASES_SINK?.trim()) {
    mkdirSync(dirname(purchasesFile), { recursive: true });
    defaults.PURCHASES_SINK = `file:${purchasesFile}`;
  }
  if (env.RECONCILE_LINKS === undefined && !env.ACCOUNTING_BASE_URL?.trim()) {
    const { DEMO_RECONCILIATION_LINK } = await import('../../sandbox/accounting/default-fixture.js');
    defaults.RECONCILE_LINKS = `${DEMO_RECONCILIATION_LINK.businessId}=${DEMO_RECONCILIATION_LINK.companyId}`;
  }
  return { env: { ...env, ...defaults }, keysFile: keys.keysFile };
}

/**
 * The whole product on one machine: a Temporal dev server (unless TEMPORAL_ADDRESS or a temporal.toml profile
 * names one), the embedded sandbox for any service that is not configured (a local stack asks for it
 * explicitly), the callback receiver and the workers.
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
  const local = await localDefaults(options.env, options.purchasesFile ?? resolve(REPO_ROOT, '.temporal/purchases.ndjson'));
  const settings = loadWorkerSettings(local.env);
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const { encryption } = settings;
  let devServer: DevServer | undefined;
  let codecServer: CodecServer | undefined;
  let temporal = settings.temporal;
  let connected;
  try {
    if (!temporal.address) {
      const headless = options.headless ?? false;
      // The web UI decodes what the workers encrypted through the codec server, allowed for the UI's origin only.
      if (!headless && encryption.encrypted) codecServer = await startLocalCodecServer(local.env, encryption, logger);
      const dbFilename = options.dbFilename === null ? undefined : (options.dbFilename ?? resolve(REPO_ROOT, '.temporal/dev.db'));
      if (dbFilename) mkdirSync(dirname(dbFilename), { recursive: true });
      devServer = await startLocalTemporal({ headless, dbFilename, namespace: temporal.namespace, uiCodecEndpoint: codecServer?.url, logger });
      if (devServer.uiUrl) {
        codecServer?.allowOrigin(devServer.uiUrl);
        codecServer?.allowOrigin(devServer.uiUrl.replace('//127.0.0.1:', '//localhost:'));
      }
      temporal = localTemporalSettings(devServer.address, devServer.namespace);
    }
    connected = await connectWorkerProcess(settings, logger, { temporal });
  } catch (err) {
    await devServer?.stop();
    await codecServer?.close();
    throw err;
  }
  const temporalAddress = temporal.address ?? devServer?.address ?? '';
  const { client, services, worker } = connected;
  // The worker holds the embedded sandbox opaquely; this stack asked for it, so it knows it is the project's.
  const sandbox = services.sandbox as Sandbox | undefined;
  if (sandbox && settings.services.accounting === undefined && worker.callbacks) {
    // The accounting sandbox's signed webhooks reach this stack's receiver, as a dashboard setting would point them.
    const { DEMO_ACCOUNTING_APPLICATION_ID } = await import('../../sandbox/accounting/default-fixture.js');
    await sandbox.inspector.setAccountingWebhookEndpoint(DEMO_ACCOUNTING_APPLICATION_ID, `${worker.callbacks.url}/webhooks/accounting`);
  }
  const running = worker.run();
  let stopped: Promise<void> | undefined;
  return {
    temporalAddress,
    uiUrl: devServer?.uiUrl,
    temporalMetricsUrl: devServer?.metricsUrl,
    codecUrl: codecServer?.url,
    payloadKeysFile: local.keysFile,
    namespace: temporal.namespace,
    client,
    settings,
    services,
    sandbox,
    worker,
    running,
    stop: () =>
      (stopped ??= (async () => {
        worker.shutdown();
        await running.catch(() => undefined);
        await connected.close();
        await devServer?.stop();
        await codecServer?.close();
      })()),
  };
}
