/**
 * The reconciliation at worker start-up: every business linked to an accounting company (RECONCILE_LINKS) is
 * checked against what the two keys can see (a wrong link stops the start, named), then gets its daily schedule.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { ConfigError } from '../config/env.js';
import type { Duration } from '@temporalio/common';
import { parseDuration } from '../contracts/duration.js';
import { SALE_TASK_QUEUE } from '../contracts/task-queues.js';
import { checkLinkAccess, ReconciliationInputError } from './load.js';
import { parseReconciliationLinks, type ReconciliationLink } from './links.js';
import { DEFAULT_RECONCILIATION_INTERVAL, ensureReconciliationSchedules, type EnsuredSchedule } from './schedule.js';

type Env = Record<string, string | undefined>;

export interface ReconciliationConfig {
  links: ReconciliationLink[];
  /** Time between two reconciliations of a business (RECONCILE_EVERY, default 24h). */
  every: Duration;
}

/** RECONCILE_LINKS and RECONCILE_EVERY; errors name the variable. */
export function loadReconciliationConfig(env: Env = process.env): ReconciliationConfig {
  const links = parseReconciliationLinks(env.RECONCILE_LINKS);
  const text = env.RECONCILE_EVERY?.trim();
  if (!text) return { links, every: DEFAULT_RECONCILIATION_INTERVAL };
  const ms = parseDuration(text);
  if (ms === undefined) throw new ConfigError(`RECONCILE_EVERY: must be a duration with its unit, e.g. 24h or 12h (got "${text}")`);
  if (ms < 60_000) throw new ConfigError(`RECONCILE_EVERY: must be at least 1m (got "${text}")`);
  return { links, every: text as Duration };
}

/** Every link names a business the compliance key may act for and a company the accounting key can see. */
export async function checkReconciliationLinks(
  clients: { compliance: ComplianceClient; accounting: AccountingClient },
  config: ReconciliationConfig,
): Promise<void> {
  for (const link of config.links) {
    try {
      await checkLinkAccess(clients, link);
    } catch (err) {
      if (err instanceof ReconciliationInputError) throw new ConfigError(`RECONCILE_LINKS: ${err.message}`);
      throw err;
    }
  }
}

/** One schedule per link (links checked first with checkReconciliationLinks); none without RECONCILE_LINKS. */
export async function startReconciliation(options: {
  client: Client;
  config: ReconciliationConfig;
  taskQueue?: string;
  logger: Logger;
}): Promise<EnsuredSchedule[]> {
  const { config, logger } = options;
  if (config.links.length === 0) {
    logger.info('reconciliation schedules off: set RECONCILE_LINKS (businessId=companyId,...) to reconcile supplier invoices daily');
    return [];
  }
  const taskQueue = options.taskQueue ?? SALE_TASK_QUEUE;
  const schedules = await ensureReconciliationSchedules(options.client, {
    links: config.links,
    taskQueue,
    interval: config.every,
    // Deployments (and test stacks) sharing a namespace on other queues keep their own schedules.
    ...(taskQueue === SALE_TASK_QUEUE ? {} : { idPrefix: `reconciliation:${taskQueue}` }),
  });
  logger.info({ every: config.every, schedules: schedules.map((s) => `${s.scheduleId} (${s.outcome})`) }, 'reconciliation schedules ready');
  return schedules;
}
