/** The rate windows a fleet spends, one per service application (docs/tenancy.md, "Each application held…"). */
import type { Logger } from '../logger.js';
import type { ComplianceApplication, TenantDirectory } from './directory.js';

export interface BudgetWindow {
  /** The service's application id, else the entry's name. */
  fairnessKey: string;
  applications: readonly string[];
  /** The lowest budget of the entries sharing it. */
  requestsPerMinute: number;
  businesses: readonly string[];
  /** Several businesses share a queue of its own fairly, its rate holding the window to its budget. */
  ownQueue: boolean;
}

export function windowKeyOf(application: ComplianceApplication): string {
  return application.serviceApplicationId ?? application.application;
}

export function budgetWindows(directory: Pick<TenantDirectory, 'applications'>): BudgetWindow[] {
  const windows = new Map<string, Omit<BudgetWindow, 'ownQueue'>>();
  for (const application of directory.applications()) {
    const fairnessKey = windowKeyOf(application);
    const window = windows.get(fairnessKey);
    windows.set(fairnessKey, {
      fairnessKey,
      applications: [...(window?.applications ?? []), application.application],
      requestsPerMinute: Math.min(window?.requestsPerMinute ?? Infinity, application.requestsPerMinute),
      businesses: [...(window?.businesses ?? []), ...application.businesses],
    });
  }
  return [...windows.values()].map((window) => ({ ...window, ownQueue: window.businesses.length > 1 }));
}

/** Allowed (business-bound keys of one application are normal), but budgets over the limit draw 429s when busy. */
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
