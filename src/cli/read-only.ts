// What the read-only CLIs (check, reconcile, tenants) share. A refused key or an unsettled business stops them, named
// by its tenant entry, never by its key.
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import { ApiError } from '../http/errors.js';
import { ConfigError, loadConfig, type Env } from '../config/env.js';
import { createLogger, type Logger } from '../logger.js';
import { assertReadOnlyServices, resolveServices } from '../services/endpoints.js';
import { resolveTenantDirectory, type TenantDirectory } from '../tenants/directory.js';
import { loadTenantsConfig } from '../tenants/load.js';

/** Warnings and errors only unless LOG_LEVEL asks for more; on standard error, as standard output is the answer. */
export function readOnlyLogger(name: string, env: Env): Logger {
  const { logLevel } = loadConfig({ LOG_LEVEL: env.LOG_LEVEL });
  return createLogger({ level: logLevel === 'info' ? 'warn' : logLevel, name, stderr: true });
}

export function namesTenantsFile(env: Env): boolean {
  return Boolean(env.TENANTS_FILE?.trim() || env.TENANTS_DIR?.trim());
}

export async function openReadOnlyTenants(env: Env, logger: Logger): Promise<TenantDirectory> {
  const tenants = loadTenantsConfig(env);
  if (loadConfig({ SANDBOX: env.SANDBOX }).embeddedSandbox) throw sandboxBesideFile(tenants.origin);
  return resolveTenantDirectory(tenants, { logger });
}

/** One client per service of the single-key variables; with none configured, the embedded sandbox's (said so). */
export async function openSingleKeyClients(env: Env, logger: Logger) {
  const config = loadConfig(env);
  assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const services = await resolveServices(config, logger);
  const compliance = new ComplianceClient(services.compliance);
  const accounting = new AccountingClient(services.accounting);
  return {
    config,
    services,
    compliance,
    accounting,
    close: async () => {
      await Promise.all([compliance.close(), accounting.close()]);
      await services.close();
    },
  };
}

/** A tenants file names the services its entries are on: nothing stands in for them, as for the worker. */
export function sandboxBesideFile(origin: string): ConfigError {
  return new ConfigError(
    `SANDBOX=embedded and ${origin.split(' ')[0]} are both set: the entries name the services they are on, ` +
      'and nothing stands in for them (unset SANDBOX)',
  );
}

/** A failed call, said with the tenant entry whose key made it (`tenants.json: compliance[0] (retail): 403 …`). */
export function withEntry(err: unknown, sources: { compliance?: string; accounting?: string }): unknown {
  if (!(err instanceof ApiError)) return err;
  const source = sources[err.service];
  return source === undefined
    ? err
    : new Error(`${source}: ${err.status ?? '-'} ${err.code}: ${err.message}`, { cause: err });
}
