import type { AccountingConfig, ComplianceConfig } from '../config/env.js';
import type { StockInSettings } from '../contracts/stock-in.js';

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

/** A business that takes its supplier invoices in as stock, as a tenants file says. */
export interface StockInEntry {
  businessId: string;
  settings: StockInSettings;
  source: string;
}

export interface TenantsConfig {
  compliance: readonly ComplianceTenant[];
  accounting: readonly AccountingTenant[];
  links: readonly TenantLink[];
  /** A tenants file's only; it wins over STOCK_IN_FROM and STOCK_IN_BY_BUSINESS for the businesses it names. */
  stockIn?: readonly StockInEntry[];
  /** `TENANTS_FILE <path>`, `TENANTS_DIR <path>`, or `environment` (only then may the embedded sandbox stand in). */
  origin: string;
}
