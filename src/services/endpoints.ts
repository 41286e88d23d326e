import type { Logger } from 'pino';
import { ConfigError, type AccountingConfig, type AppConfig, type ComplianceConfig } from '../config/env.js';
import { ApiError } from '../http/errors.js';
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import type { TenantsConfig } from '../tenants/types.js';

/** Where the two services are, after the embedded sandbox has filled in whatever was not configured. */
export interface ServiceEndpoints {
  compliance: ComplianceConfig;
  accounting: AccountingConfig;
  /** Present when at least one service is the embedded sandbox; the product only starts and stops it. */
  sandbox: EmbeddedSandbox | undefined;
  sandboxReconciliationLinks: ReadonlyArray<{ businessId: string; companyId: string }>;
  close(): Promise<void>;
}

export interface EmbeddedSandbox {
  complianceUrl: string;
  accountingUrl: string;
  close(): Promise<void>;
}

/** A worker with a service missing would sign into a sandbox: refused unless SANDBOX=embedded asks for one. */
export function assertServicesConfigured(config: AppConfig): void {
  if (config.embeddedSandbox) return;
  const missing = [
    ...(config.compliance ? [] : ['COMPLIANCE_BASE_URL and COMPLIANCE_API_KEY']),
    ...(config.accounting ? [] : ['ACCOUNTING_BASE_URL and ACCOUNTING_API_KEY']),
  ];
  if (missing.length === 0) return;
  throw new ConfigError(
    `${missing.join(', ')} are not set: set them to use the real services, ` +
      'or SANDBOX=embedded to run against the embedded sandbox (local development only)',
  );
}

/** Read-only tools file nothing, so with no service configured at all they use the embedded sandbox, and say so. */
export function assertReadOnlyServices(config: AppConfig, notice: (message: string) => void): void {
  if (!config.embeddedSandbox && config.compliance === undefined && config.accounting === undefined) {
    notice('no service is configured (COMPLIANCE_* / ACCOUNTING_*): using the embedded sandbox and its demo data');
    return;
  }
  assertServicesConfigured(config);
}

/** `sandbox/embedded.ts`, as far as the product uses it. */
interface EmbeddedServicesModule {
  startEmbeddedServices(options: { logger: Logger; fixture?: unknown }): Promise<{
    sandbox: EmbeddedSandbox;
    compliance: { baseUrl: string; apiKey: string; businessId: string };
    accounting: { baseUrl: string; apiKey: string; clientSecret: string; clientId: string; webhookSecret: string };
    reconciliationLinks: Array<{ businessId: string; companyId: string }>;
  }>;
}

/**
 * The sandbox and its dependencies (pdfkit, qrcode) are development dependencies, loaded only when a service is left
 * to it. The specifier is built at run time so that the production build does not follow it into sandbox/.
 */
async function loadSandbox(): Promise<EmbeddedServicesModule> {
  const sandboxDir = '../../sandbox';
  try {
    return (await import(`${sandboxDir}/embedded.js`)) as EmbeddedServicesModule;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const reason = err instanceof Error ? err.message : String(err);
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new ConfigError(
        'the embedded sandbox is not part of a production install: use the configured services, set ' +
          'COMPLIANCE_BASE_URL and COMPLIANCE_API_KEY, ACCOUNTING_BASE_URL and ACCOUNTING_API_KEY, and unset SANDBOX ' +
          `(SANDBOX=embedded is for a development checkout: npm ci, npm run worker; ${reason})`,
        { cause: err },
      );
    }
    throw new Error(
      `the embedded sandbox cannot be loaded (${reason}): it needs the development dependencies (npm ci without ` +
        '--omit=dev)',
      { cause: err },
    );
  }
}

/**
 * The configured services, or the embedded sandbox with its demo credentials for each one that is not (production
 * entry points call assertServicesConfigured first). `sandboxFixture`: the world the sandbox starts with.
 */
export async function resolveServices(
  config: AppConfig,
  logger: Logger,
  options: { sandboxFixture?: unknown } = {},
): Promise<ServiceEndpoints> {
  if (config.compliance && config.accounting) {
    return {
      compliance: config.compliance,
      accounting: config.accounting,
      sandbox: undefined,
      sandboxReconciliationLinks: [],
      close: async () => {},
    };
  }
  const { startEmbeddedServices } = await loadSandbox();
  const embedded = await startEmbeddedServices({
    logger: logger.child({ component: 'sandbox' }),
    ...(options.sandboxFixture === undefined ? {} : { fixture: options.sandboxFixture }),
  });
  const { sandbox } = embedded;
  logger.info(
    { complianceUrl: sandbox.complianceUrl, accountingUrl: sandbox.accountingUrl },
    'embedded sandbox started for the services that are not configured',
  );
  return {
    compliance: config.compliance ?? { ...embedded.compliance, timeoutMs: 30_000, allowLoopbackCallbacks: true },
    accounting: config.accounting ?? {
      ...embedded.accounting,
      signRequests: true,
      signQuery: false,
      timeoutMs: 30_000,
    },
    sandboxReconciliationLinks: config.accounting === undefined ? embedded.reconciliationLinks : [],
    sandbox,
    close: () => sandbox.close(),
  };
}

/** A service's credentials were refused (or the service is unreachable) at start-up. */
class ServiceCredentialsError extends Error {
  override readonly name = 'ServiceCredentialsError';
}

function credentialFailure(
  service: 'compliance' | 'accounting',
  baseUrl: string,
  err: unknown,
  signed: boolean,
): ServiceCredentialsError {
  const prefix = service === 'compliance' ? 'COMPLIANCE' : 'ACCOUNTING';
  const at = `the ${service} service at ${baseUrl}`;
  if (!(err instanceof ApiError))
    return new ServiceCredentialsError(
      `${prefix}_BASE_URL: ${at} answered unexpectedly (${err instanceof Error ? err.message : String(err)})`,
    );
  if (err.status === undefined)
    return new ServiceCredentialsError(`${prefix}_BASE_URL: ${at} cannot be reached (${err.message})`);
  const what = `${err.status} ${err.code}`;
  if (err.status === 401) {
    const setting =
      signed && /signature|timestamp/i.test(err.message) ? `${prefix}_CLIENT_SECRET` : `${prefix}_API_KEY`;
    return new ServiceCredentialsError(
      `${setting} was refused by ${at} (${what}): the key is wrong, revoked or expired; the value is not shown`,
    );
  }
  if (err.status === 403)
    return new ServiceCredentialsError(
      `${prefix}_API_KEY is not allowed to ${err.operation} at ${baseUrl} (${what}); the value is not shown`,
    );
  return new ServiceCredentialsError(`${at} failed the start-up check ${err.operation} (${what}: ${err.message})`);
}

/** One client per service, for what is asked once (start-up checks, the read-only tools); close() closes both. */
export function openClients(endpoints: { compliance: ComplianceConfig; accounting: AccountingConfig }) {
  const compliance = new ComplianceClient(endpoints.compliance);
  const accounting = new AccountingClient(endpoints.accounting);
  const close = async (): Promise<void> => void (await Promise.all([compliance.close(), accounting.close()]));
  return { compliance, accounting, close };
}

/** One read-only call per key of the single-key variables, so an error names the variable, never its value. */
export async function checkServiceCredentials(tenants: TenantsConfig, logger: Logger): Promise<void> {
  for (const { service } of tenants.compliance) {
    const compliance = new ComplianceClient(service);
    try {
      const { data } = await compliance.getIdentity();
      logger.info(
        { environment: data.apiKey?.environment, scopes: data.apiKey?.scopes },
        'compliance credentials accepted',
      );
    } catch (err) {
      throw credentialFailure('compliance', service.baseUrl, err, false);
    } finally {
      await compliance.close();
    }
  }
  for (const { service } of tenants.accounting) {
    const accounting = new AccountingClient(service);
    try {
      await accounting.listCompanies({ limit: 1 });
      logger.info('accounting credentials accepted');
    } catch (err) {
      throw credentialFailure('accounting', service.baseUrl, err, service.signRequests);
    } finally {
      await accounting.close();
    }
  }
}
