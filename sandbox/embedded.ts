/**
 * The sandbox as a worker embeds it (SANDBOX=embedded, the local stack, tests): both services started on free
 * loopback ports, and the credentials a worker reaches them with. The one module the product loads of the
 * sandbox, by a dynamic import it builds at run time (src/services/endpoints.ts), so a production build and
 * install carry none of it.
 */
import type { Logger } from 'pino';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_ID,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  DEMO_RECONCILIATION_LINK,
} from './accounting/default-fixture.js';
import { DEMO } from './default-fixture.js';
import type { SandboxFixtureInput } from './fixture.js';
import { startSandbox, type Sandbox } from './server.js';

export interface EmbeddedServices {
  sandbox: Sandbox;
  compliance: { baseUrl: string; apiKey: string; businessId: string };
  accounting: { baseUrl: string; apiKey: string; clientSecret: string; clientId: string; webhookSecret: string };
  /** The demo world's business linked to its accounting company, for reconciling without configuration. */
  reconciliationLinks: Array<{ businessId: string; companyId: string }>;
}

/**
 * Starts both services with `fixture` (default: the demo world). A fixture must keep the demo credentials: they
 * are what the worker reaches the services with.
 */
export async function startEmbeddedServices(options: { logger: Logger; fixture?: unknown }): Promise<EmbeddedServices> {
  const sandbox = await startSandbox({
    logger: options.logger,
    ...(options.fixture === undefined ? {} : { fixture: options.fixture as SandboxFixtureInput }),
  });
  return {
    sandbox,
    compliance: { baseUrl: sandbox.complianceUrl, apiKey: DEMO.keys.orgWide, businessId: DEMO.businesses.nairobi },
    accounting: {
      baseUrl: sandbox.accountingUrl,
      apiKey: DEMO_ACCOUNTING_API_KEY,
      clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
      clientId: DEMO_ACCOUNTING_CLIENT_ID,
      webhookSecret: DEMO_ACCOUNTING_WEBHOOK_SECRET,
    },
    reconciliationLinks: [{ ...DEMO_RECONCILIATION_LINK }],
  };
}
