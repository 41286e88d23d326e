/**
 * How the worker reaches each service for one business: which application's key, rate-limit gate and budget a
 * call goes through. Activities ask this room for the client of the business (or company) they act for and never
 * build a client themselves, so serving several applications changes this room alone.
 */
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import type { AccountingConfig, ComplianceConfig } from '../config/env.js';
import { RateLimitGate } from '../http/rate-limit-gate.js';
import { DEFAULT_APPLICATION } from '../tenants/types.js';
import type { BudgetPlacement } from '../contracts/budget-placement.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { applicationRateMetrics, bothObservers, complianceRateBudgetMetrics } from '../temporal/rate-budget-metrics.js';

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

/** Longest wait for the compliance service's rate-limit window to reset before a call is handed back to Temporal. */
const RATE_LIMIT_HOLD_MS = 10_000;

/** What an open ServiceAccess holds until the process stops. */
export interface OpenServiceAccess extends ServiceAccess {
  close(): Promise<void>;
}

/** One application per service: every business and company is reached with the same key. */
export function singleApplication(clients: {
  compliance?: ComplianceClient;
  accounting?: AccountingClient;
}): ServiceAccess {
  const compliance = () => {
    if (clients.compliance === undefined) throw new Error('no compliance service was given to these activities');
    return clients.compliance;
  };
  const accounting = () => {
    if (clients.accounting === undefined) throw new Error('no accounting service was given to these activities');
    return clients.accounting;
  };
  return {
    compliance,
    accounting,
    complianceApplications: () => [compliance()],
    accountingApplications: () => [accounting()],
    // One application is the whole queue's budget (its server-side rate limit): its businesses share it fairly.
    place: (businessId) => ({ application: DEFAULT_APPLICATION, fairnessKey: businessId }),
  };
}

export interface OpenServiceAccessOptions {
  /**
   * Where the compliance application's budget and traffic are published (the worker's /metrics), with the
   * activity starts per second the compliance queue's server-side limit allows, for the budget gauge.
   */
  metrics?: { recorder: MetricsRecorder; complianceBudget: { activitiesPerSecond: number } };
}

/**
 * The configured applications, one per service. Every compliance call of this process goes through one gate: the
 * service's headers say what is left of the application's window, and a reset a few seconds away is waited for,
 * so the slot the queue's rate limit gave the call is not wasted.
 */
export function openServiceAccess(
  endpoints: { compliance: ComplianceConfig; accounting: AccountingConfig },
  options: OpenServiceAccessOptions = {},
): OpenServiceAccess {
  const recorder = options.metrics?.recorder;
  if (recorder) {
    recorder.knowApplications([DEFAULT_APPLICATION]);
    recorder.set('etims_application_budget_per_second', options.metrics!.complianceBudget.activitiesPerSecond, {
      application: DEFAULT_APPLICATION,
    });
  }
  const observer = recorder
    ? bothObservers(
        complianceRateBudgetMetrics(recorder, options.metrics!.complianceBudget),
        applicationRateMetrics(recorder, DEFAULT_APPLICATION),
      )
    : undefined;
  const compliance = new ComplianceClient({
    ...endpoints.compliance,
    ...(observer ? { observer } : {}),
    rateLimitGate: new RateLimitGate({ holdUpToMs: RATE_LIMIT_HOLD_MS }),
  });
  const accounting = new AccountingClient(endpoints.accounting);
  return {
    ...singleApplication({ compliance, accounting }),
    close: async () => {
      await Promise.all([compliance.close(), accounting.close()]);
    },
  };
}
