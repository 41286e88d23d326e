/**
 * The Temporal Schedules a worker makes (or brings up to date) at start-up: one purchases sync per business when a
 * sink is configured, one reconciliation per linked business. Restarting never makes a second schedule.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { ConfigError } from '../config/env.js';
import { describeSink, type PurchasesConfig } from '../config/purchases.js';
import type { ReconciliationConfig } from '../config/reconciliation.js';
import type { PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import {
  ensurePurchasesSyncSchedules,
  type EnsuredSchedule as EnsuredPurchasesSchedule,
} from '../purchases/schedule.js';
import { checkLinkAccess, ReconciliationInputError } from '../reconciliation/load.js';
import { ensureReconciliationSchedules, type EnsuredSchedule } from '../reconciliation/schedule.js';
import type { ServiceAccess } from '../services/access.js';

export interface PurchasesSyncStatus {
  enabled: boolean;
  schedules: EnsuredPurchasesSchedule[];
}

/** The businesses the compliance keys can act for ("lists the business ids a key can use"). */
async function businessesOfKeys(services: ServiceAccess): Promise<string[]> {
  const ids = new Set<string>();
  for (const application of services.complianceApplications()) {
    for (const business of (await application.listBusinesses()).data) ids.add(business.id);
  }
  return [...ids];
}

/**
 * PURCHASES_SYNC_BUSINESSES with tenants: each must be one the tenants serve, or its every sync would fail on
 * business_not_served.
 */
function servedBusinesses(configured: readonly string[], served: readonly string[]): string[] {
  const known = new Set(served);
  const unknown = configured.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new ConfigError(
      `PURCHASES_SYNC_BUSINESSES: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} served by no compliance application of the tenants`,
    );
  }
  return [...configured];
}

/**
 * With a sink configured, one schedule per business: the configured ones, else those the tenants serve (`served`),
 * else (one key) every business the key can act for.
 */
export async function schedulePurchasesSync(options: {
  client: Client;
  /** Lists the businesses of the keys when none are configured and no `served` is given. */
  services: ServiceAccess;
  /** With tenants: the businesses the tenant directory serves (not every business the keys could act for). */
  served?: readonly string[];
  config: PurchasesConfig;
  /** Queue of the workflows (default `sales`). */
  taskQueue?: string;
  /** Passed to every sync (tests shorten delivery retries). */
  syncOptions?: PurchasesSyncOptions;
  logger: Logger;
}): Promise<PurchasesSyncStatus> {
  const { config, logger } = options;
  if (config.sink === undefined) {
    logger.info('purchases sync off: set PURCHASES_SINK (file:<path> or an https:// URL) to sync supplier invoices');
    return { enabled: false, schedules: [] };
  }
  const { served } = options;
  let businessIds: string[];
  if (served === undefined) businessIds = config.businessIds ?? (await businessesOfKeys(options.services));
  else businessIds = config.businessIds ? servedBusinesses(config.businessIds, served) : [...served];
  const schedules = await ensurePurchasesSyncSchedules(options.client, {
    businessIds,
    interval: config.intervalMs,
    ...(options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue }),
    ...(options.syncOptions === undefined ? {} : { options: options.syncOptions }),
    logger,
  });
  logger.info(
    {
      sink: describeSink(config.sink),
      intervalSeconds: config.intervalMs / 1000,
      businesses: businessIds,
      schedules: schedules.map((s) => `${s.scheduleId} ${s.outcome}`),
    },
    businessIds.length === 0
      ? `purchases sync on, but ${served === undefined ? 'the compliance key acts for' : 'the tenants serve'} no business`
      : 'purchases sync scheduled',
  );
  return { enabled: true, schedules };
}

/** Every link names a business the compliance key may act for and a company the accounting key can see. */
export async function checkReconciliationLinks(services: ServiceAccess, config: ReconciliationConfig): Promise<void> {
  for (const link of config.links) {
    try {
      await checkLinkAccess(
        { compliance: services.compliance(link.businessId), accounting: services.accounting(link.companyId) },
        link,
      );
    } catch (err) {
      if (err instanceof ReconciliationInputError) throw new ConfigError(`RECONCILE_LINKS: ${err.message}`);
      throw err;
    }
  }
}

/** One schedule per link (links checked first with checkReconciliationLinks); none without RECONCILE_LINKS. */
export async function scheduleReconciliation(options: {
  client: Client;
  config: ReconciliationConfig;
  taskQueue?: string;
  logger: Logger;
}): Promise<EnsuredSchedule[]> {
  const { config, logger } = options;
  if (config.links.length === 0) {
    logger.info(
      'reconciliation schedules off: set RECONCILE_LINKS (businessId=companyId,...) to reconcile supplier invoices daily',
    );
    return [];
  }
  const taskQueue = options.taskQueue ?? WORKFLOW_TASK_QUEUE;
  const schedules = await ensureReconciliationSchedules(options.client, {
    links: config.links,
    taskQueue,
    interval: config.every,
    // Deployments (and test stacks) sharing a namespace on other queues keep their own schedules.
    ...(taskQueue === WORKFLOW_TASK_QUEUE ? {} : { idPrefix: `reconciliation:${taskQueue}` }),
  });
  logger.info(
    { every: config.every, schedules: schedules.map((s) => `${s.scheduleId} (${s.outcome})`) },
    'reconciliation schedules ready',
  );
  return schedules;
}
