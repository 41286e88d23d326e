import type { Logger } from 'pino';
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import { ConfigError, type AccountingConfig, type AppConfig, type ComplianceConfig } from '../config/env.js';
import { ApiError } from '../http/errors.js';
import type { SandboxFixtureInput } from '../../sandbox/fixture.js';
import type { Sandbox } from '../../sandbox/server.js';

/** Where the two services are, after the embedded sandbox has filled in whatever was not configured. */
export interface ServiceEndpoints {
  compliance: ComplianceConfig;
  accounting: AccountingConfig;
  /** Present when at least one service is the embedded sandbox. */
  sandbox: Sandbox | undefined;
  close(): Promise<void>;
}

export interface ResolveServicesOptions {
  /**
   * The world the embedded sandbox starts with (default: the demo world), as `npm run sandbox -- --fixture`
   * takes it. Its demo credentials must stay valid: they are what the services are reached with.
   */
  sandboxFixture?: SandboxFixtureInput;
}

/**
 * A worker with a service missing would sign nothing real (or, worse, sign into a sandbox): refused with the
 * variables named, unless SANDBOX=embedded asks for the embedded sandbox explicitly.
 */
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

/**
 * For read-only tools (`npm run check`, `npm run reconcile`): with no service configured at all they use the
 * embedded sandbox, and say so on stderr, since they file nothing and a first run should show something; a
 * half-configured pair is still refused, as a worker would refuse it.
 */
export function assertReadOnlyServices(config: AppConfig, notice: (message: string) => void): void {
  if (!config.embeddedSandbox && config.compliance === undefined && config.accounting === undefined) {
    notice('no service is configured (COMPLIANCE_* / ACCOUNTING_*): using the embedded sandbox and its demo data');
    return;
  }
  assertServicesConfigured(config);
}

/**
 * The sandbox and its test-only dependencies (pdfkit, qrcode) are development dependencies: loaded only here,
 * only when a service is left to the embedded sandbox, so a production install never needs them.
 */
async function loadSandbox() {
  try {
    const [server, compliance, accounting] = await Promise.all([
      import('../../sandbox/server.js'),
      import('../../sandbox/default-fixture.js'),
      import('../../sandbox/accounting/default-fixture.js'),
    ]);
    return { startSandbox: server.startSandbox, DEMO: compliance.DEMO, accounting };
  } catch (err) {
    throw new Error(
      `the embedded sandbox cannot be loaded (${err instanceof Error ? err.message : String(err)}): ` +
        'it needs the development dependencies (npm ci without --omit=dev)',
      { cause: err },
    );
  }
}

/**
 * The configured services, or the embedded sandbox with its demo credentials for each one that is not
 * configured. Nothing downstream is told which it got: clients see a base URL and a key either way.
 * Production entry points call assertServicesConfigured first (connectSaleService does); local stacks and
 * tests rely on the fallback.
 */
export async function resolveServices(config: AppConfig, logger: Logger, options: ResolveServicesOptions = {}): Promise<ServiceEndpoints> {
  if (config.compliance && config.accounting) {
    return { compliance: config.compliance, accounting: config.accounting, sandbox: undefined, close: async () => {} };
  }
  const { startSandbox, DEMO, accounting } = await loadSandbox();
  const sandbox = await startSandbox({
    logger: logger.child({ component: 'sandbox' }),
    ...(options.sandboxFixture ? { fixture: options.sandboxFixture } : {}),
  });
  logger.info(
    { complianceUrl: sandbox.complianceUrl, accountingUrl: sandbox.accountingUrl },
    'embedded sandbox started for the services that are not configured',
  );
  return {
    compliance: config.compliance ?? {
      baseUrl: sandbox.complianceUrl,
      apiKey: DEMO.keys.orgWide,
      businessId: DEMO.businesses.nairobi,
      timeoutMs: 30_000,
      allowLoopbackCallbacks: true,
    },
    accounting: config.accounting ?? {
      baseUrl: sandbox.accountingUrl,
      apiKey: accounting.DEMO_ACCOUNTING_API_KEY,
      clientSecret: accounting.DEMO_ACCOUNTING_CLIENT_SECRET,
      clientId: accounting.DEMO_ACCOUNTING_CLIENT_ID,
      webhookSecret: accounting.DEMO_ACCOUNTING_WEBHOOK_SECRET,
      signRequests: true,
      signQuery: false,
      timeoutMs: 30_000,
    },
    sandbox,
    close: async () => {
      await sandbox.close();
    },
  };
}

/** A service's credentials were refused (or the service is unreachable) at start-up. */
export class ServiceCredentialsError extends Error {
  override readonly name = 'ServiceCredentialsError';
}

function credentialFailure(service: 'compliance' | 'accounting', baseUrl: string, err: unknown, signed: boolean): ServiceCredentialsError {
  const prefix = service === 'compliance' ? 'COMPLIANCE' : 'ACCOUNTING';
  if (!(err instanceof ApiError)) {
    return new ServiceCredentialsError(`${prefix}_BASE_URL: the ${service} service at ${baseUrl} answered unexpectedly (${err instanceof Error ? err.message : String(err)})`);
  }
  const what = `${err.status ?? 'no answer'} ${err.code}`;
  if (err.status === undefined) {
    return new ServiceCredentialsError(`${prefix}_BASE_URL: the ${service} service at ${baseUrl} cannot be reached (${err.message})`);
  }
  if (err.status === 401) {
    const setting = signed && /signature|timestamp/i.test(err.message) ? `${prefix}_CLIENT_SECRET` : `${prefix}_API_KEY`;
    return new ServiceCredentialsError(
      `${setting} was refused by the ${service} service at ${baseUrl} (${what}): the key is wrong, revoked or expired; the value is not shown`,
    );
  }
  if (err.status === 403) {
    return new ServiceCredentialsError(`${prefix}_API_KEY is not allowed to ${err.operation} at ${baseUrl} (${what}); the value is not shown`);
  }
  return new ServiceCredentialsError(`the ${service} service at ${baseUrl} failed the start-up check ${err.operation} (${what}: ${err.message})`);
}

/**
 * One read-only call per service with the credentials the worker will use (compliance identity, accounting
 * companies), so a wrong or expired key stops the start-up instead of the first sale. Errors name the
 * variable, never its value.
 */
export async function checkServiceCredentials(services: Pick<ServiceEndpoints, 'compliance' | 'accounting'>, logger: Logger): Promise<void> {
  const compliance = new ComplianceClient(services.compliance);
  const accounting = new AccountingClient(services.accounting);
  try {
    try {
      const { data } = await compliance.getIdentity();
      logger.info({ environment: data.apiKey?.environment, scopes: data.apiKey?.scopes }, 'compliance credentials accepted');
    } catch (err) {
      if (err instanceof ServiceCredentialsError) throw err;
      throw credentialFailure('compliance', services.compliance.baseUrl, err, false);
    }
    try {
      await accounting.listCompanies({ limit: 1 });
      logger.info('accounting credentials accepted');
    } catch (err) {
      throw credentialFailure('accounting', services.accounting.baseUrl, err, services.accounting.signRequests);
    }
  } finally {
    await compliance.close();
    await accounting.close();
  }
}
