/**
 * The tenants a fleet serves: each compliance application (its key, its budget, the businesses it serves), each
 * accounting application, and the link of a business to its accounting company.
 */
import type { AccountingConfig, ComplianceConfig } from '../config/env.js';

/** A name an operator gives an application: metric labels, search attributes, log fields and errors use it, never the key. */
export type ApplicationName = string;

export interface ComplianceTenant {
  application: ApplicationName;
  /**
   * Where and with which key (resolved from its source: inline, file or environment variable). `businessId` is
   * COMPLIANCE_BUSINESS_ID for the single-key tenant and undefined for a tenants-file entry: there the business is
   * chosen per call, from `businesses` or the key's identity.
   */
  service: ComplianceConfig;
  /** The application's limit on the compliance service (120 by default, C-contract). */
  requestsPerMinute: number;
  /** The businesses it serves; undefined: every business its key can act for. */
  businesses: readonly string[] | undefined;
  /** Where the entry came from, for errors: e.g. `tenants.json: compliance[2] (merchant-c)`. */
  source: string;
}

export interface AccountingTenant {
  application: ApplicationName;
  service: AccountingConfig;
  source: string;
}

/** A business reconciled with its accounting company, through one accounting application. */
export interface TenantLink {
  businessId: string;
  companyId: string;
  accounting: ApplicationName;
  source: string;
}

export interface TenantsConfig {
  /**
   * From the environment, a service that is not configured has no tenant (the embedded sandbox may stand in, as
   * today); from a tenants file, a service without entries serves nobody yet.
   */
  compliance: readonly ComplianceTenant[];
  accounting: readonly AccountingTenant[];
  /** From the environment (RECONCILE_LINKS), every link names the accounting application `default`. */
  links: readonly TenantLink[];
  /**
   * Where the tenants were read from: `TENANTS_FILE <path>`, `TENANTS_DIR <path>`, or exactly `environment` (one
   * tenant; only then may the embedded sandbox stand in for a service).
   */
  origin: string;
}
