/**
 * The rate windows a fleet spends, one per service application: the compliance service counts requests per
 * application, so entries whose keys belong to one application share its window, and the window, not the entry, is
 * what a compliance queue holds to a rate and what every call for its businesses carries as its fairness key.
 */
import type { Logger } from '../logger.js';
import type { ComplianceApplication, TenantDirectory } from './directory.js';

export interface BudgetWindow {
  /** The service's application id, else the entry's name. */
  fairnessKey: string;
  /** The entries sharing it, in the file's order. */
  applications: readonly string[];
  /** The lowest budget of the entries sharing it (each already capped by the service's limit). */
  requestsPerMinute: number;
  businesses: readonly string[];
  /**
   * A queue of its own when it serves several businesses, so they share it fairly (a fairness key each) while the
   * queue's own rate holds the window to its budget.
   */
  ownQueue: boolean;
}

export function windowKeyOf(application: ComplianceApplication): string {
  return application.serviceApplicationId ?? application.application;
}

/** In the file's order of each window's first entry. */
export function budgetWindows(directory: Pick<TenantDirectory, 'applications'>): BudgetWindow[] {
  const windows = new Map<string, { applications: string[]; requestsPerMinute: number; businesses: string[] }>();
  for (const application of directory.applications()) {
    const key = windowKeyOf(application);
    const window = windows.get(key);
    if (window === undefined) {
      windows.set(key, {
        applications: [application.application],
        requestsPerMinute: application.requestsPerMinute,
        businesses: [...application.businesses],
      });
    } else {
      window.applications.push(application.application);
      window.requestsPerMinute = Math.min(window.requestsPerMinute, application.requestsPerMinute);
      window.businesses.push(...application.businesses);
    }
  }
  return [...windows].map(([fairnessKey, window]) => ({
    fairnessKey,
    ...window,
    ownQueue: window.businesses.length > 1,
  }));
}

export function windowOf(windows: readonly BudgetWindow[], application: ComplianceApplication) {
  return windows.find((window) => window.fairnessKey === windowKeyOf(application));
}

/**
 * Entries whose keys belong to one service application draw on one window: budgets that add up to more than the
 * service allows would draw 429s once all are busy. Allowed (business-bound keys of one application are a normal
 * set-up), but said.
 */
export function warnSharedWindows(applications: readonly ComplianceApplication[], logger: Logger | undefined): void {
  const byService = new Map<string, ComplianceApplication[]>();
  for (const application of applications) {
    const id = application.serviceApplicationId;
    if (id !== undefined) byService.set(id, [...(byService.get(id) ?? []), application]);
  }
  for (const [serviceApplicationId, sharing] of byService) {
    const total = sharing.reduce((sum, application) => sum + application.requestsPerMinute, 0);
    const limit = sharing[0]!.serviceRequestsPerMinute;
    if (sharing.length > 1 && limit !== undefined && total > limit) {
      logger?.warn(
        {
          serviceApplicationId,
          applications: sharing.map((a) => a.application),
          requestsPerMinute: total,
          serviceRequestsPerMinute: limit,
        },
        'entries share one service application, and their budgets add up to more than its limit',
      );
    }
  }
}
