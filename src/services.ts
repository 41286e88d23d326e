import type { Logger } from 'pino';
import type { AccountingConfig, AppConfig, ComplianceConfig } from './config/env.js';
import { DEMO } from './sandbox/default-fixture.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_ID,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
} from './sandbox/accounting/default-fixture.js';
import type { SandboxFixtureInput } from './sandbox/fixture.js';
import { startSandbox, type Sandbox } from './sandbox/server.js';

/** Where the two services are, after the embedded sandbox has filled in whatever was not configured. */
export interface ServiceEndpoints {
  compliance: ComplianceConfig;
  accounting: AccountingConfig;
  /** Present when at least one service is the embedded sandbox. */
  sandbox: Sandbox | undefined;
  close(): Promise<void>;
}

function sandboxCompliance(sandbox: Sandbox): ComplianceConfig {
  return {
    baseUrl: sandbox.complianceUrl,
    apiKey: DEMO.keys.orgWide,
    businessId: DEMO.businesses.nairobi,
    timeoutMs: 30_000,
    allowLoopbackCallbacks: true,
  };
}

function sandboxAccounting(sandbox: Sandbox): AccountingConfig {
  return {
    baseUrl: sandbox.accountingUrl,
    apiKey: DEMO_ACCOUNTING_API_KEY,
    clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
    clientId: DEMO_ACCOUNTING_CLIENT_ID,
    webhookSecret: DEMO_ACCOUNTING_WEBHOOK_SECRET,
    signRequests: true,
    signQuery: false,
    timeoutMs: 30_000,
  };
}

export interface ResolveServicesOptions {
  /**
   * The world the embedded sandbox starts with (default: the demo world), as `npm run sandbox -- --fixture`
   * takes it. Its demo credentials must stay valid: they are what the services are reached with.
   */
  sandboxFixture?: SandboxFixtureInput;
}

/**
 * The configured services, or the embedded sandbox with its demo credentials for each one that is not
 * configured. Nothing downstream is told which it got: clients see a base URL and a key either way.
 */
export async function resolveServices(config: AppConfig, logger: Logger, options: ResolveServicesOptions = {}): Promise<ServiceEndpoints> {
  const sandbox =
    config.compliance && config.accounting
      ? undefined
      : await startSandbox({
          logger: logger.child({ component: 'sandbox' }),
          ...(options.sandboxFixture ? { fixture: options.sandboxFixture } : {}),
        });
  if (sandbox) {
    logger.info(
      { complianceUrl: sandbox.complianceUrl, accountingUrl: sandbox.accountingUrl },
      'embedded sandbox started for the services that are not configured',
    );
  }
  return {
    compliance: config.compliance ?? sandboxCompliance(sandbox as Sandbox),
    accounting: config.accounting ?? sandboxAccounting(sandbox as Sandbox),
    sandbox,
    close: async () => {
      await sandbox?.close();
    },
  };
}
