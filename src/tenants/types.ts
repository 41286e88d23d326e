import type { AccountingConfig, ComplianceConfig } from '../config/env.js';

export interface ComplianceTenant {
  /** An operator's name: metrics, search attributes, logs and errors use it, never the key. */
  application: string;
  /** `businessId` only for the single-key tenant: a file's entries choose the business per call. */
  service: ComplianceConfig;
  requestsPerMinute: number;
  /** The businesses it serves; undefined: every business its key can act for. */
  businesses: readonly string[] | undefined;
  /** For errors, e.g. `tenants.json: compliance[2] (merchant-c)`. */
  source: string;
}

export interface AccountingTenant {
  application: string;
  service: AccountingConfig;
  source: string;
}

export interface TenantLink {
  businessId: string;
  companyId: string;
  accounting: string;
  source: string;
}

export interface TenantsConfig {
  compliance: readonly ComplianceTenant[];
  accounting: readonly AccountingTenant[];
  links: readonly TenantLink[];
  /** `TENANTS_FILE <path>`, `TENANTS_DIR <path>`, or `environment` (only then may the embedded sandbox stand in). */
  origin: string;
}
