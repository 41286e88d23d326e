import type { Logger } from 'pino';
import { ConfigError, type AccountingConfig, type AppConfig, type ComplianceConfig } from '../config/env.js';

/** After the embedded sandbox has filled in whatever was not configured. */
export interface ServiceEndpoints {
  compliance: ComplianceConfig;
  accounting: AccountingConfig;
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

interface EmbeddedServicesModule {
  startEmbeddedServices(options: { logger: Logger; fixture?: unknown }): Promise<{
    sandbox: EmbeddedSandbox;
    compliance: { baseUrl: string; apiKey: string; businessId: string };
    accounting: { baseUrl: string; apiKey: string; clientSecret: string; clientId: string; webhookSecret: string };
    reconciliationLinks: Array<{ businessId: string; companyId: string }>;
  }>;
}

/** A development dependency: the specifier is built at run time so the production build does not follow it. */
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

/** The embedded sandbox stands in for each service not configured (production calls assertServicesConfigured first). */
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
