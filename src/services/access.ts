/**
 * How the worker reaches each service for one business: which application's key, rate-limit gate and budget a
 * call goes through. Activities ask this room for the client of the business (or company) they act for and never
 * build a client themselves, so serving several applications changes this room alone.
 */
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import type { BudgetPlacement } from '../contracts/budget-placement.js';

export interface ServiceAccess {
  /** The compliance client that acts for this business. */
  compliance(businessId: string): ComplianceClient;
  /** The accounting client for this company; without one, the configured application's (a sync batch it owns). */
  accounting(companyId?: string): AccountingClient;
  /** One client per compliance application, for what is asked of each key (the businesses it can act for). */
  complianceApplications(): readonly ComplianceClient[];
  /** One client per accounting application. */
  accountingApplications(): readonly AccountingClient[];
  /**
   * Where the business's calls stand on the fleet's budget. `newWork` refuses (UnknownBusinessError) a business no
   * application serves now; without it, a business only still drained is placed with the application draining it.
   */
  place(businessId: string, options: { newWork: boolean }): BudgetPlacement;
}

/** What an open ServiceAccess holds until the process stops. */
export interface OpenServiceAccess extends ServiceAccess {
  close(): Promise<void>;
}
