/** The Temporal Schedules of the businesses served: a purchases sync each (with a sink), a reconciliation per link. */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { ConfigError } from '../config/env.js';
import { describeSink, type PurchasesConfig } from '../config/purchases.js';
import { purchasesScheduleId, type PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { ensurePurchasesSyncSchedules } from '../purchases/schedule.js';
import { ensureReconciliationSchedules, type EnsuredSchedule } from '../reconciliation/schedule.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { reconciliationScheduleId } from '../contracts/reconciliation.js';
import type { TenantDirectory } from '../tenants/directory.js';
import type { WorkerSettings } from './settings.js';

/** With a sink configured, one schedule per business: the configured ones, else those the tenants serve. */
export async function schedulePurchasesSync(options: {
  client: Client;
  served: readonly string[];
  /** A business not served yet whose key has not answered since start: scheduled once it is served. */
  awaits?: (businessId: string) => boolean;
  config: PurchasesConfig;
  taskQueue?: string;
  syncOptions?: PurchasesSyncOptions;
  logger: Logger;
}) {
  const { config, logger, served } = options;
  if (config.sink === undefined) {
    logger.info('purchases sync off: set PURCHASES_SINK (file:<path> or an https:// URL) to sync supplier invoices');
    return { enabled: false, schedules: [] };
  }
  // A configured business the tenants do not serve would fail every sync on business_not_served.
  const unknown = (config.businessIds ?? []).filter((id) => !served.includes(id) && !options.awaits?.(id));
  if (unknown.length > 0) {
    throw new ConfigError(
      `PURCHASES_SYNC_BUSINESSES: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} ` +
        'served by no compliance application of the tenants',
    );
  }
  const businessIds = purchasesBusinessIds(config, served);
  const schedules = await ensurePurchasesSyncSchedules(options.client, {
    businessIds,
    interval: config.intervalMs,
    taskQueue: options.taskQueue,
    options: options.syncOptions,
    logger,
  });
  logger.info(
    {
      sink: describeSink(config.sink),
      intervalSeconds: config.intervalMs / 1000,
      businesses: businessIds,
      schedules: schedules.map((s) => `${s.scheduleId} ${s.outcome}`),
    },
    businessIds.length === 0 ? 'purchases sync on, but the tenants serve no business' : 'purchases sync scheduled',
  );
  return { enabled: true, schedules };
}

export function purchasesBusinessIds(config: PurchasesConfig, served: readonly string[]): string[] {
  if (config.sink === undefined) return [];
  return (config.businessIds ?? served).filter((id) => served.includes(id));
}

export function servedBusinesses(directory: TenantDirectory): string[] {
  return directory.applications().flatMap((application) => application.businesses);
}

// Deployments (and test stacks) sharing a namespace on other queues keep their own schedules.
const reconciliationIdPrefix = (taskQueue: string) =>
  taskQueue === WORKFLOW_TASK_QUEUE ? undefined : `reconciliation:${taskQueue}`;

/** The purchases syncs and reconciliations of what `directory` serves, made or brought up to date. */
export async function scheduleServed(
  scheduling: {
    client: Client;
    settings: Pick<WorkerSettings, 'purchases' | 'reconciliation'>;
    logger: Logger;
    taskQueue: string;
    metrics: MetricsRecorder;
    syncOptions?: PurchasesSyncOptions;
  },
  directory: TenantDirectory,
) {
  const { client, settings, logger, taskQueue, metrics } = scheduling;
  const purchases = await schedulePurchasesSync({
    client,
    served: servedBusinesses(directory),
    awaits: (businessId) => directory.awaits(businessId),
    config: settings.purchases,
    logger,
    taskQueue,
    syncOptions: scheduling.syncOptions,
  });
  const syncing = purchases.schedules.map((schedule) => schedule.businessId);
  metrics.knowBusinesses('purchases', syncing);
  const links = directory.links().map(({ businessId, companyId }) => ({ businessId, companyId }));
  let reconciliation: EnsuredSchedule[] = [];
  if (links.length === 0) {
    logger.info(
      'reconciliation schedules off: set RECONCILE_LINKS (businessId=companyId,...) to reconcile supplier invoices ' +
        'daily',
    );
  } else {
    const { every } = settings.reconciliation;
    reconciliation = await ensureReconciliationSchedules(client, {
      links,
      taskQueue,
      interval: every,
      idPrefix: reconciliationIdPrefix(taskQueue),
    });
    logger.info(
      { every, schedules: reconciliation.map((s) => `${s.scheduleId} (${s.outcome})`) },
      'reconciliation schedules ready',
    );
  }
  const reconciled = links.map((link) => link.businessId);
  metrics.knowBusinesses('reconciliation', reconciled);
  return { purchases, reconciliation };
}

/** A removed business's schedules are paused (its syncs would fail on business_not_served); one not made is skipped. */
export async function setSchedulesPaused(options: {
  client: Client;
  businessIds: readonly string[];
  paused: boolean;
  taskQueue: string;
  purchases: PurchasesConfig;
  logger: Logger;
}): Promise<void> {
  const { client, taskQueue, paused } = options;
  const ids = options.businessIds.flatMap((businessId) => [
    ...(options.purchases.sink === undefined ? [] : [purchasesScheduleId(businessId, taskQueue)]),
    reconciliationScheduleId(businessId, reconciliationIdPrefix(taskQueue)),
  ]);
  const changed: string[] = [];
  for (const scheduleId of ids) {
    const handle = client.schedule.getHandle(scheduleId);
    try {
      if ((await handle.describe()).state.paused === paused) continue;
      const note = paused ? 'business removed from the tenants file' : 'business served again by the tenants file';
      await (paused ? handle.pause(note) : handle.unpause(note));
      changed.push(scheduleId);
    } catch (err) {
      if (err instanceof Error && err.name === 'ScheduleNotFoundError') continue;
      throw err;
    }
  }
  if (changed.length > 0)
    options.logger.info({ schedules: changed, paused }, paused ? 'schedules paused' : 'schedules resumed');
}
