import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { payloadEncryptionFromEnv, type PayloadEncryption } from '../../src/codec/data-converter.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../../src/codec/server.js';
import type { AppConfig } from '../../src/config/env.js';
import { loadPurchasesConfig, type PurchasesConfig } from '../../src/config/purchases.js';
import type { WorkerConfig } from '../../src/config/worker.js';
import { loadReconciliationConfig, type ReconciliationConfig } from '../../src/reconciliation/start.js';
import { connectSaleService, type SaleService } from '../../src/worker/start.js';
import type { ServiceEndpoints } from '../../src/services/endpoints.js';
import { startDevServer, type DevServer } from '../temporal-cli/dev-server.js';
import { localTemporalSettings } from '../../src/temporal/connection.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';

export interface Stack {
  temporalAddress: string;
  /** The Temporal web UI, when this stack started the server. */
  uiUrl: string | undefined;
  /** The codec server the UI decodes payloads with, when this stack started the UI. */
  codecUrl: string | undefined;
  /** Where the local stack's own payload key is kept, when no key was configured. */
  payloadKeysFile: string | undefined;
  namespace: string;
  client: Client;
  services: ServiceEndpoints;
  sale: SaleService;
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
function localEncryption(): { encryption: PayloadEncryption; keysFile: string | undefined } {
  const env = process.env;
  if (env.PAYLOAD_KEYS?.trim() || env.PAYLOAD_KEYS_FILE?.trim() || env.PAYLOAD_ENCRYPTION?.trim()) {
    return { encryption: payloadEncryptionFromEnv(env), keysFile: undefined };
  }
  const keysFile = resolve(REPO_ROOT, '.temporal/payload-keys');
  if (!existsSync(keysFile)) {
    mkdirSync(dirname(keysFile), { recursive: true });
    writeFileSync(keysFile, `local-1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  return { encryption: payloadEncryptionFromEnv({ ...env, PAYLOAD_KEYS_FILE: keysFile }), keysFile };
}

/** The usual port when free, any free one otherwise. */
async function startLocalCodecServer(encryption: PayloadEncryption, logger: Logger): Promise<CodecServer> {
  const options = { ...codecServerOptionsFromEnv(), codec: encryption.codec, logger: logger.child({ component: 'codec-server' }) };
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
 * What the environment leaves unset, a local stack fills in so every piece runs: supplier invoices go to an NDJSON
 * file, and with the accounting sandbox, the demo business is reconciled with the demo company it is linked to.
 */
async function localSystemDefaults(config: AppConfig, purchasesFile: string): Promise<{ purchases: PurchasesConfig; reconciliation: ReconciliationConfig }> {
  const purchases = loadPurchasesConfig(process.env);
  const reconciliation = loadReconciliationConfig(process.env);
  if (purchases.sink === undefined) {
    mkdirSync(dirname(purchasesFile), { recursive: true });
    purchases.sink = { kind: 'file', path: purchasesFile };
  }
  if (reconciliation.links.length === 0 && config.accounting === undefined && process.env.RECONCILE_LINKS === undefined) {
    const { DEMO_RECONCILIATION_LINK } = await import('../../sandbox/accounting/default-fixture.js');
    reconciliation.links = [{ ...DEMO_RECONCILIATION_LINK }];
  }
  return { purchases, reconciliation };
}

/**
 * The whole product on one machine: a Temporal dev server (unless TEMPORAL_ADDRESS or a temporal.toml profile
 * names one), the embedded sandbox for any service that is not configured (a local stack asks for it
 * explicitly), the callback receiver and the workers.
 */
export async function startStack(options: {
  config: AppConfig;
  workerConfig: WorkerConfig;
  logger: Logger;
  /** No web UI (the demo and tests). */
  headless?: boolean;
  /** Keep Temporal's state in a file (default .temporal/dev.db; `null` for in-memory). */
  dbFilename?: string | null;
  /** Where the purchases sync writes when PURCHASES_SINK is unset (default .temporal/purchases.ndjson). */
  purchasesFile?: string;
}): Promise<Stack> {
  const { config, workerConfig, logger } = options;
  const local = await localSystemDefaults(config, options.purchasesFile ?? resolve(REPO_ROOT, '.temporal/purchases.ndjson'));
  installTemporalRuntime(logger, { metricsBindAddress: workerConfig.metricsBindAddress });
  const { encryption, keysFile } = localEncryption();
  let devServer: DevServer | undefined;
  let codecServer: CodecServer | undefined;
  let temporal = workerConfig.temporal;
  let worker;
  try {
    if (!temporal.address) {
      const headless = options.headless ?? false;
      // The web UI decodes what the workers encrypted through the codec server, allowed for the UI's origin only.
      if (!headless && encryption.encrypted) codecServer = await startLocalCodecServer(encryption, logger);
      const dbFilename = options.dbFilename === null ? undefined : (options.dbFilename ?? resolve(REPO_ROOT, '.temporal/dev.db'));
      if (dbFilename) mkdirSync(dirname(dbFilename), { recursive: true });
      devServer = await startLocalTemporal({ headless, dbFilename, namespace: temporal.namespace, uiCodecEndpoint: codecServer?.url, logger });
      if (devServer.uiUrl) {
        codecServer?.allowOrigin(devServer.uiUrl);
        codecServer?.allowOrigin(devServer.uiUrl.replace('//127.0.0.1:', '//localhost:'));
      }
      temporal = localTemporalSettings(devServer.address, devServer.namespace);
    }
    worker = await connectSaleService({ config: { ...config, embeddedSandbox: true }, workerConfig, logger, temporal, encryption, ...local });
  } catch (err) {
    await devServer?.stop();
    await codecServer?.close();
    throw err;
  }
  const temporalAddress = temporal.address ?? devServer?.address ?? '';
  const { client, services, sale } = worker;
  if (services.sandbox && config.accounting === undefined && sale.callbacks) {
    // The accounting sandbox's signed webhooks reach this stack's receiver, as a dashboard setting would point them.
    const { DEMO_ACCOUNTING_APPLICATION_ID } = await import('../../sandbox/accounting/default-fixture.js');
    await services.sandbox.inspector.setAccountingWebhookEndpoint(DEMO_ACCOUNTING_APPLICATION_ID, `${sale.callbacks.url}/webhooks/accounting`);
  }
  const running = sale.run();
  let stopped: Promise<void> | undefined;
  return {
    temporalAddress,
    uiUrl: devServer?.uiUrl,
    codecUrl: codecServer?.url,
    payloadKeysFile: keysFile,
    namespace: temporal.namespace,
    client,
    services,
    sale,
    running,
    stop: () =>
      (stopped ??= (async () => {
        sale.shutdown();
        await running.catch(() => undefined);
        await worker.close();
        await devServer?.stop();
        await codecServer?.close();
      })()),
  };
}
