/** ServiceAccess over the live tenants: activities never see a key; workflow inputs carry business ids only. */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { FAILURE_TYPES } from '../contracts/failures.js';
import type { ServiceAccess } from '../services/access.js';
import { windowKeyOf } from './budget-windows.js';
import { accountingClientOf, type LiveTenants } from './live.js';
import type { TenantDirectory } from './directory.js';

/** An ApplicationFailure so that it reaches the workflow typed, and not retried: only a change of tenants helps. */
export class UnknownBusinessError extends ApplicationFailure {
  readonly code = FAILURE_TYPES.businessNotServed;

  constructor(
    readonly businessId: string,
    origin: string,
  ) {
    super(
      `business ${businessId} is served by no compliance application of ${origin}`,
      FAILURE_TYPES.businessNotServed,
      true,
      [{ businessId }],
    );
  }
}

export const AWAITED_SERVICE_FAILURE = FAILURE_TYPES.tenantAwaitingService;

/** A call whose key has not answered since start-up: retryable, and `requestSent: false` (nothing reached it). */
function awaitedService(message: string, subject: Record<string, string | null>): ApplicationFailure {
  // Benign: expected while an outage lasts, and logged once at start; SDK logs and failure metrics stay quiet.
  return ApplicationFailure.create({
    message,
    type: AWAITED_SERVICE_FAILURE,
    details: [{ ...subject, requestSent: false }],
    category: ApplicationFailureCategory.BENIGN,
  });
}

function awaitedBusiness(businessId: string): ApplicationFailure {
  return awaitedService(
    `business ${businessId} waits for the compliance service: the key that may serve it has not answered since ` +
      'the worker started (asked again until it does)',
    { businessId },
  );
}

export class UnknownCompanyError extends ApplicationFailure {
  readonly code = FAILURE_TYPES.companyNotServed;

  constructor(
    readonly companyId: string | undefined,
    message: string,
  ) {
    super(message, FAILURE_TYPES.companyNotServed, true, [{ companyId: companyId ?? null }]);
  }
}

function unknownCompany(directory: TenantDirectory, companyId: string | undefined): UnknownCompanyError {
  const names = directory.accountingApplications().map((a) => a.application);
  const company = companyId === undefined ? '' : ` (company ${companyId})`;
  const message =
    names.length === 0
      ? `no accounting application is configured in ${directory.origin}${company}`
      : companyId === undefined
        ? `the call names no company, and ${names.length} accounting applications are configured (${names.join(', ')})`
        : `company ${companyId} is linked through no accounting application of ${directory.origin}`;
  return new UnknownCompanyError(companyId, message);
}

/** A removed business's work under way goes through the application that served it. */
export function openTenantAccess(tenants: LiveTenants): ServiceAccess & { close(): Promise<void> } {
  return {
    compliance: (businessId) => {
      const route = tenants.routeOf(businessId);
      if (!route && tenants.awaits(businessId)) throw awaitedBusiness(businessId);
      if (!route) throw new UnknownBusinessError(businessId, tenants.current().origin);
      return route.client;
    },
    accounting: (companyId) => {
      const directory = tenants.current();
      const client = accountingClientOf(directory, companyId);
      if (!client && tenants.awaitsAccounting()) {
        throw awaitedService(
          `company ${companyId ?? '(none named)'} waits for the accounting service: an accounting key has not ` +
            'answered since the worker started (asked again until it does)',
          { companyId: companyId ?? null },
        );
      }
      if (!client) throw unknownCompany(directory, companyId);
      return client;
    },
    place: (businessId, { newWork }) => {
      const route = tenants.routeOf(businessId);
      if (route?.serving || (route && !newWork)) {
        const application = route.application.application;
        const key = windowKeyOf(route.application);
        const window = route.serving ? tenants.current().budgetWindow(key) : undefined;
        const requestsPerMinute = window?.requestsPerMinute ?? route.application.requestsPerMinute;
        // A window of several businesses has its own queue: there the business is the fairness key, shared fairly.
        if (window?.ownQueue)
          return { application, fairnessKey: businessId, ownQueue: window.fairnessKey, requestsPerMinute };
        return { application, fairnessKey: key, requestsPerMinute };
      }
      // Not known yet is not "served by none": placement waits (retried) for the key that may serve it to answer.
      if (!route && tenants.awaits(businessId)) throw awaitedBusiness(businessId);
      if (newWork) throw new UnknownBusinessError(businessId, tenants.current().origin);
      // Its calls fail with business_not_served, as they did before placement existed; the key is only for the queue.
      return { application: null, fairnessKey: businessId };
    },
    close: () => tenants.close(),
  };
}
