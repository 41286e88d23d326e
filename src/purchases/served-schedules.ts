/**
 * The Temporal Schedules of the businesses served: a purchases sync each (with a sink, or for a business that takes
 * stock in), a reconciliation per link.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { ConfigError } from '../config/env.js';
import { describeSink, type PurchasesConfig } from '../config/purchases.js';
import type { StockInSettingsOf } from '../config/stock-in.js';
import { purchasesScheduleId, type PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import type { ReconciliationConfig } from '../config/reconciliation.js';
import { reconciliationScheduleId } from '../contracts/reconciliation.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { ensureReconciliationSchedules, type EnsuredSchedule } from '../reconciliation/schedule.js';
import type { TenantDirectory } from '../tenants/directory.js';
import { ensurePurchasesSyncSchedules } from './schedule.js';

/**
 * One schedule per business: with a sink configured, the configured ones, else those the tenants serve; and every
 * business served that takes stock in, sink or not (its sync is what tells the stock-in of its invoices).
 */
export async function schedulePurchasesSync(options: {
  client: Client;
  served: readonly string[];
  /** A business not served yet whose key has not answered since start: scheduled once it is served. */
  awaits?: (businessId: string) => boolean;
  config: PurchasesConfig;
  stockIn?: StockInSettingsOf;
  taskQueue?: string;
  syncOptions?: PurchasesSyncOptions;
  logger: Logger;
}) {
  const { config, logger, served } = options;
  const stocking = stockInBusinessIds(served, options.stockIn);
  if (config.sink === undefined && stocking.length === 0) {
    logger.info(
      'purchases sync off: set PURCHASES_SINK (file:<path> or an https:// URL) to sync supplier invoices, or ' +
        'stock-in settings to take them in as stock',
    );
    return { enabled: false, schedules: [] };
  }
  // A configured business the tenants do not serve would fail every sync on business_not_served.
  const unknown = (config.sink === undefined ? [] : (config.businessIds ?? [])).filter(
    (id) => !served.includes(id) && !options.awaits?.(id),
  );
  if (unknown.length > 0) {
    throw new ConfigError(
      `PURCHASES_SYNC_BUSINESSES: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} ` +
        'served by no compliance application of the tenants',
    );
  }
  const businessIds = purchasesBusinessIds(config, served, options.stockIn);
  const schedules = await ensurePurchasesSyncSchedules(options.client, {
    businessIds,
    interval: config.intervalMs,
    taskQueue: options.taskQueue,
    // Without a sink a sync only tells the stock-in: it delivers nothing, and says no sink is down.
    options: withListing(
      config.sink === undefined ? { ...options.syncOptions, deliver: false } : options.syncOptions,
      config.listing,
    ),
    logger,
  });
  logger.info(
    {
      sink: describeSink(config.sink),
      intervalSeconds: config.intervalMs / 1000,
      businesses: businessIds,
      takingStockIn: stocking.length,
      schedules: schedules.map((s) => `${s.scheduleId} ${s.outcome}`),
    },
    businessIds.length === 0 ? 'purchases sync on, but the tenants serve no business' : 'purchases sync scheduled',
  );
  return { enabled: true, schedules };
}

/** Those delivered to the sink (when there is one), then those only taking stock in. */
export function purchasesBusinessIds(
  config: PurchasesConfig,
  served: readonly string[],
  stockIn?: StockInSettingsOf,
): string[] {
  const delivered = config.sink === undefined ? [] : (config.businessIds ?? served).filter((id) => served.includes(id));
  return [...new Set([...delivered, ...stockInBusinessIds(served, stockIn)])];
}

function stockInBusinessIds(served: readonly string[], stockIn: StockInSettingsOf | undefined): string[] {
  return stockIn === undefined ? [] : served.filter((id) => stockIn(id) !== undefined);
}

// Deployments (and test stacks) sharing a namespace on other queues keep their own schedules.
const reconciliationIdPrefix = (taskQueue: string) =>
  taskQueue === WORKFLOW_TASK_QUEUE ? undefined : `reconciliation:${taskQueue}`;

/** What a worker process hands its schedules: its context, with the settings they follow. */
export interface Scheduling {
  client: Client;
  taskQueue: string;
  logger: Logger;
  metrics: MetricsRecorder;
  purchases: PurchasesConfig;
  reconciliation: Pick<ReconciliationConfig, 'every' | 'periodDays'>;
  stockIn?: StockInSettingsOf;
  syncOptions?: PurchasesSyncOptions;
}

/** The purchases syncs and reconciliations of what `directory` serves, made or brought up to date. */
export async function scheduleServed(scheduling: Scheduling, directory: TenantDirectory) {
  const { client, logger, taskQueue, metrics } = scheduling;
  const purchases = await schedulePurchasesSync({
    ...scheduling,
    served: directory.businesses(),
    awaits: (businessId) => directory.awaits(businessId),
    config: scheduling.purchases,
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
    const { every, periodDays } = scheduling.reconciliation;
    reconciliation = await ensureReconciliationSchedules(client, {
      links,
      taskQueue,
      interval: every,
      ...(periodDays === undefined ? {} : { periodDays }),
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
  stockIn?: StockInSettingsOf;
  logger: Logger;
}): Promise<void> {
  const { client, taskQueue, paused } = options;
  // Paused whatever made it; resumed only where this worker would make it (a sink, or the business takes stock in).
  const syncs = (businessId: string) =>
    paused || options.purchases.sink !== undefined || options.stockIn?.(businessId) !== undefined;
  const ids = options.businessIds.flatMap((businessId) => [
    ...(syncs(businessId) ? [purchasesScheduleId(businessId, taskQueue)] : []),
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

/** The listing settings configured, over the options given; none: the options as they are (schedules unchanged). */
function withListing(
  options: PurchasesSyncOptions | undefined,
  listing: PurchasesConfig['listing'] | undefined,
): PurchasesSyncOptions | undefined {
  if (listing === undefined || Object.keys(listing).length === 0) return options;
  return { ...listing, ...options };
}
