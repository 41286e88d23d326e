/** The single-key variables, written as a tenants configuration: one tenant named `default`. */
import { loadConfig, type AccountingConfig, type ComplianceConfig, type Env } from '../config/env.js';
import { parseReconciliationLinks } from '../config/reconciliation.js';
import { loadWorkerConfig } from '../config/worker.js';
import { SINGLE_KEY_APPLICATION } from '../contracts/budget-placement.js';
import type { TenantsConfig } from './types.js';

export const ENVIRONMENT_ORIGIN = 'environment';

/** Refused beside a tenants file (it would be ignored), unless an entry names it as its key source. */
export const SINGLE_TENANT_VARIABLES = [
  'COMPLIANCE_API_KEY',
  'COMPLIANCE_BUSINESS_ID',
  'COMPLIANCE_REQUESTS_PER_MINUTE',
  'ACCOUNTING_API_KEY',
  'ACCOUNTING_CLIENT_SECRET',
  'ACCOUNTING_CLIENT_ID',
  'ACCOUNTING_WEBHOOK_SECRET',
  'RECONCILE_LINKS',
] as const;

export function fromSingleKeyVariables(env: Env): TenantsConfig {
  const services = loadConfig(env);
  const { complianceRequestsPerMinute } = loadWorkerConfig({
    COMPLIANCE_REQUESTS_PER_MINUTE: env.COMPLIANCE_REQUESTS_PER_MINUTE,
  });
  const businessId = services.compliance?.businessId;
  return singleKeyTenants(services, {
    requestsPerMinute: complianceRequestsPerMinute,
    businesses: businessId === undefined ? undefined : [businessId],
    links: parseReconciliationLinks(env.RECONCILE_LINKS),
  });
}

/** One application of each service given (none of one not given), as tenant `default` of origin `environment`. */
export function singleKeyTenants(
  services: { compliance?: ComplianceConfig | undefined; accounting?: AccountingConfig | undefined },
  options: {
    requestsPerMinute: number;
    businesses?: readonly string[] | undefined;
    links?: ReadonlyArray<{ businessId: string; companyId: string }>;
    source?: string;
  },
): TenantsConfig {
  const application = SINGLE_KEY_APPLICATION;
  return {
    compliance: services.compliance
      ? [
          {
            application,
            service: services.compliance,
            requestsPerMinute: options.requestsPerMinute,
            businesses: options.businesses,
            source: options.source ?? 'environment: COMPLIANCE_*',
          },
        ]
      : [],
    accounting: services.accounting
      ? [{ application, service: services.accounting, source: options.source ?? 'environment: ACCOUNTING_*' }]
      : [],
    links: (options.links ?? []).map(({ businessId, companyId }) => ({
      businessId,
      companyId,
      accounting: application,
      source: options.source ?? 'RECONCILE_LINKS',
    })),
    origin: ENVIRONMENT_ORIGIN,
  };
}
