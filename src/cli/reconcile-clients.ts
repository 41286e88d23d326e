// With a tenants file, settled by the tenant directory as the worker settles it: what the scheduled run reads.
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { ConfigError, type Env } from '../config/env.js';
import { parseReconciliationLinks } from '../config/reconciliation.js';
import type { Logger } from '../logger.js';
import type { TenantDirectory } from '../tenants/directory.js';
import { someIds } from '../tenants/directory.js';
import { namesTenantsFile, openReadOnlyTenants, openSingleKeyClients, withEntry } from './read-only.js';

/** The two clients a reconciliation reads with, and what to say of them. */
export interface ReconciliationClients {
  compliance: ComplianceClient;
  accounting: AccountingClient;
  companyId: string;
  /** With a tenants file: the applications read through, which the tenant directory checked the keys of. */
  applications: { compliance: string; accounting: string } | undefined;
  /** A failed call, said with the tenant entry that made it. */
  wrapError(err: unknown): unknown;
  close(): Promise<void>;
}

/**
 * Through the tenants file, or the single-key variables (or the embedded sandbox); there the company is `company`,
 * else the business's RECONCILE_LINKS entry, else the embedded sandbox's own link.
 */
export async function openReconciliation(
  env: Env,
  businessId: string,
  company: string | undefined,
  logger: Logger,
): Promise<ReconciliationClients> {
  if (namesTenantsFile(env)) return openTenantReconciliation(env, businessId, company, logger);
  const links = parseReconciliationLinks(env.RECONCILE_LINKS);
  const clients = await openSingleKeyClients(env, logger);
  const companyId =
    company ??
    [...links, ...clients.services.sandboxReconciliationLinks].find((l) => l.businessId === businessId)?.companyId;
  if (companyId === undefined) {
    await clients.close();
    throw new ConfigError(
      `no accounting company is linked to business ${businessId}: pass --company or set RECONCILE_LINKS ` +
        `(businessId=companyId,...)`,
    );
  }
  return { ...clients, companyId, applications: undefined, wrapError: (err) => err };
}

/** Served by no application: says which serve what, so the missing entry or listing is plain. */
function notServed(directory: TenantDirectory, businessId: string): ConfigError {
  const serving = directory
    .applications()
    .map((application) => `${application.application} (${someIds(application.businesses, 5)})`);
  return new ConfigError(
    `business ${businessId} is served by no compliance application of ${directory.origin}; they serve: ` +
      `${serving.join('; ') || 'nothing'}`,
  );
}

/** The accounting application a company is read through: its link's, else the only one whose key sees it. */
function accountingApplicationFor(directory: TenantDirectory, businessId: string, companyId: string): string {
  const linked = directory.accountingApplicationOf(companyId);
  if (linked !== undefined) return linked;
  const seeing = directory.accountingApplications().filter((application) => application.companies.includes(companyId));
  if (seeing.length === 1) return seeing[0]!.application;
  if (seeing.length === 0) {
    throw new ConfigError(
      `company ${companyId} (for business ${businessId}) is seen by no accounting application of ${directory.origin}`,
    );
  }
  throw new ConfigError(
    `company ${companyId} is seen by accounting applications ` +
      `${seeing.map((a) => a.application).join(' and ')} of ${directory.origin}, and no link says which: ` +
      `add a link for business ${businessId}`,
  );
}

/** The clients of the applications serving the business and its company; closes the tenants on a refusal. */
async function openTenantReconciliation(
  env: Env,
  businessId: string,
  company: string | undefined,
  logger: Logger,
): Promise<ReconciliationClients> {
  const directory = await openReadOnlyTenants(env, logger);
  try {
    const complianceName = directory.applicationOf(businessId);
    if (complianceName === undefined) throw notServed(directory, businessId);
    const link = directory.links().find((l) => l.businessId === businessId);
    const companyId = company ?? link?.companyId;
    if (companyId === undefined) {
      throw new ConfigError(
        `no accounting company is linked to business ${businessId} in ${directory.origin}: pass --company or add a link`,
      );
    }
    const accountingName =
      link && link.companyId === companyId
        ? link.accounting
        : accountingApplicationFor(directory, businessId, companyId);
    const compliance = directory.complianceClient(complianceName);
    const accounting = directory.accountingClient(accountingName);
    // The directory holds a client for every application it resolved.
    if (!compliance || !accounting)
      throw new Error(
        `the tenants hold no client for ` +
          `${compliance ? `accounting application ${accountingName}` : `compliance application ${complianceName}`}`,
      );
    const sources = {
      compliance: directory.applications().find((a) => a.application === complianceName)?.source,
      accounting: directory.accountingApplications().find((a) => a.application === accountingName)?.source,
    };
    return {
      compliance,
      accounting,
      companyId,
      applications: { compliance: complianceName, accounting: accountingName },
      wrapError: (err) => withEntry(err, sources),
      close: () => directory.close(),
    };
  } catch (err) {
    await directory.close();
    throw err;
  }
}
