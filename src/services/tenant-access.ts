/**
 * ServiceAccess over many applications (issue 16): each business's calls go through the client of the application
 * that serves it, each company's through its accounting application's, as the tenant directory settled at
 * start-up. Activities keep asking for "the client of this business"; they never see a key, and workflow inputs
 * carry business ids only.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { FAILURE_TYPES } from '../contracts/failures.js';
import type { OpenServiceAccess } from './access.js';
import type { TenantDirectory } from './tenant-directory.js';

export const BUSINESS_NOT_SERVED = FAILURE_TYPES.businessNotServed;
export const COMPANY_NOT_SERVED = FAILURE_TYPES.companyNotServed;

/**
 * A call for a business no application serves (never onboarded, or removed). An ApplicationFailure so that,
 * thrown from an activity, it reaches the workflow as it is: typed, and not retried, since only a change of the
 * tenants makes it pass.
 */
export class UnknownBusinessError extends ApplicationFailure {
  readonly code = BUSINESS_NOT_SERVED;

  constructor(
    readonly businessId: string,
    origin: string,
  ) {
    super(`business ${businessId} is served by no compliance application of ${origin}`, BUSINESS_NOT_SERVED, true, [{ businessId }]);
  }
}

/** An accounting call whose company no accounting application is linked for (or that names none among several). */
export class UnknownCompanyError extends ApplicationFailure {
  readonly code = COMPANY_NOT_SERVED;

  constructor(
    readonly companyId: string | undefined,
    message: string,
  ) {
    super(message, COMPANY_NOT_SERVED, true, [{ companyId: companyId ?? null }]);
  }
}

function unknownCompany(directory: TenantDirectory, companyId: string | undefined): UnknownCompanyError {
  const names = directory.accountingApplications().map((a) => a.application);
  if (names.length === 0) {
    return new UnknownCompanyError(companyId, `no accounting application is configured in ${directory.origin}${companyId === undefined ? '' : ` (company ${companyId})`}`);
  }
  if (companyId === undefined) {
    return new UnknownCompanyError(undefined, `the call names no company, and ${names.length} accounting applications are configured (${names.join(', ')})`);
  }
  return new UnknownCompanyError(companyId, `company ${companyId} is linked through no accounting application of ${directory.origin}`);
}

/** The directory's clients as a ServiceAccess; closing it closes every client. */
export function openTenantAccess(directory: TenantDirectory): OpenServiceAccess {
  const compliance = (businessId: string): ComplianceClient => {
    const application = directory.applicationOf(businessId);
    const client = application === undefined ? undefined : directory.complianceClient(application);
    if (!client) throw new UnknownBusinessError(businessId, directory.origin);
    return client;
  };
  const accounting = (companyId?: string): AccountingClient => {
    const linked = companyId === undefined ? undefined : directory.accountingApplicationOf(companyId);
    const applications = directory.accountingApplications();
    // One accounting application serves every company, linked or not, as the single-key worker always did.
    const application = linked ?? (applications.length === 1 ? applications[0]!.application : undefined);
    const client = application === undefined ? undefined : directory.accountingClient(application);
    if (!client) throw unknownCompany(directory, companyId);
    return client;
  };
  return {
    compliance,
    accounting,
    complianceApplications: () => directory.applications().flatMap((a) => directory.complianceClient(a.application) ?? []),
    accountingApplications: () => directory.accountingApplications().flatMap((a) => directory.accountingClient(a.application) ?? []),
    close: () => directory.close(),
  };
}
