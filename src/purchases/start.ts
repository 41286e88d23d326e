/**
 * The purchases sync at worker start-up: with a sink configured, one schedule per business (the configured ones,
 * or every business the compliance key can act for); without one, nothing, and a log line saying so.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ComplianceClient } from '../compliance/client.js';
import { describeSink, type PurchasesConfig } from '../config/purchases.js';
import type { PurchasesSyncOptions } from '../contracts/purchases-sync.js';
import { ensurePurchasesSyncSchedules, type EnsuredSchedule } from './schedule.js';
import type { PurchaseEventSink } from './sink.js';

/** How a sale service sets up the purchases sync; tests pass their own. */
export interface PurchasesSetup {
  config: PurchasesConfig;
  /** Default: the sink `config.sink` names, opened at start. */
  sink?: PurchaseEventSink;
  syncOptions?: PurchasesSyncOptions;
}

export interface StartPurchasesSyncOptions {
  client: Client;
  compliance: ComplianceClient;
  config: PurchasesConfig;
  /** Queue of the sale workers, which run the sync workflows. */
  taskQueue?: string;
  /** Passed to every sync (tests shorten delivery retries). */
  syncOptions?: PurchasesSyncOptions;
  logger: Logger;
}

export interface PurchasesSyncStatus {
  enabled: boolean;
  schedules: EnsuredSchedule[];
}

/** The businesses the compliance key can act for ("lists the business ids a key can use"). */
async function businessesOfKey(compliance: ComplianceClient): Promise<string[]> {
  return (await compliance.listBusinesses()).data.map((b) => b.id);
}

export async function startPurchasesSync(options: StartPurchasesSyncOptions): Promise<PurchasesSyncStatus> {
  const { config, logger } = options;
  if (config.sink === undefined) {
    logger.info('purchases sync off: set PURCHASES_SINK (file:<path> or an https:// URL) to sync supplier invoices');
    return { enabled: false, schedules: [] };
  }
  const businessIds = config.businessIds ?? (await businessesOfKey(options.compliance));
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
    businessIds.length === 0 ? 'purchases sync on, but the compliance key acts for no business' : 'purchases sync scheduled',
  );
  return { enabled: true, schedules };
}
