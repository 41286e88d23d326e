import { ApplicationFailure } from '@temporalio/workflow';
import {
  PURCHASES_PAGE_SIZE,
  PURCHASES_PAGES_PER_RUN,
  type PurchasesSyncOptions,
} from '../../src/contracts/purchases-sync.js';

const DEFAULT_DELIVERY_ATTEMPTS = 8;

/** The sync's options with their defaults applied. */
export interface PurchasesSyncSettings {
  pageSize: number;
  pagesPerRun: number;
  deliveryAttempts: number;
  deliveryRetryInterval: string;
}

export function settingsOf(options: PurchasesSyncOptions = {}): PurchasesSyncSettings {
  const pageSize = options.pageSize ?? PURCHASES_PAGE_SIZE;
  const pagesPerRun = options.pagesPerRun ?? PURCHASES_PAGES_PER_RUN;
  const deliveryAttempts = options.deliveryAttempts ?? DEFAULT_DELIVERY_ATTEMPTS;
  const wrong = (field: string, rule: string) =>
    ApplicationFailure.create({ type: 'invalid_request', message: `options.${field} ${rule}`, nonRetryable: true });
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
    throw wrong('pageSize', 'must be an integer from 1 to 100');
  if (!Number.isInteger(pagesPerRun) || pagesPerRun < 1) throw wrong('pagesPerRun', 'must be a positive integer');
  if (!Number.isInteger(deliveryAttempts) || deliveryAttempts < 1)
    throw wrong('deliveryAttempts', 'must be a positive integer');
  return {
    pageSize,
    pagesPerRun,
    deliveryAttempts,
    deliveryRetryInterval: options.deliveryRetryInterval ?? '1 second',
  };
}
