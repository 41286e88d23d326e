/**
 * Tenants of the sandbox for the tests of the tenant directory and access: entries as the tenants file's loader
 * gives them (src/tenants/load.ts), pointing at a sandbox the test started.
 */
import type { AccountingTenant, TenantLink, TenantsConfig } from '../../src/tenants/types.js';
import type { Sandbox } from '../../sandbox/server.js';

export function sandboxTenants(current: () => Sandbox) {
  return {
    accounting(application: string, apiKey: string): AccountingTenant {
      return {
        application,
        service: {
          baseUrl: current().accountingUrl,
          apiKey,
          clientSecret: undefined,
          clientId: undefined,
          webhookSecret: undefined,
          signRequests: false,
          signQuery: false,
          timeoutMs: 5_000,
        },
        source: `tenants.json: accounting (${application})`,
      };
    },
    link(businessId: string, companyId: string, accountingApplication: string): TenantLink {
      return {
        businessId,
        companyId,
        accounting: accountingApplication,
        source: `tenants.json: links (${businessId})`,
      };
    },
    tenants(parts: Partial<Omit<TenantsConfig, 'origin'>>): TenantsConfig {
      return {
        compliance: parts.compliance ?? [],
        accounting: parts.accounting ?? [],
        links: parts.links ?? [],
        origin: 'tenants.json',
      };
    },
    /** The key of the sandbox's second accounting application. */
    otherAccountingKey: () =>
      current().fixture.accounting.applications.find((app) => app.id === 'app_other')!.apiKeys[0]!,
  };
}
