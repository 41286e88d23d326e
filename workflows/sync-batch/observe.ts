import type { BillPaymentSyncRecord } from '../../activities/accounting.js';
import type { KnownSyncStatus, SortDirection } from '../../src/accounting/schemas.js';
import type { FailedBillPayment } from '../../src/contracts/sync-batch.js';
import type { SyncBatchApi } from './api.js';

/** Pages one scan may read (100 × 100 bill payments); a batch bigger than that needs billPaymentIds paging. */
const MAX_PAGES_PER_SCAN = 100;

export interface BatchScope {
  syncBatchId: string;
  companyId: string | undefined;
  /** From the input: the batch's payments by id; undefined: by the service's `syncBatchId` field. */
  ids: ReadonlySet<string> | undefined;
  pageSize: number;
}

async function scan(
  api: SyncBatchApi,
  scope: BatchScope,
  status: KnownSyncStatus,
  sortOrder: SortDirection,
  enough: (found: readonly BillPaymentSyncRecord[]) => boolean,
) {
  const result = { found: [] as BillPaymentSyncRecord[], untagged: false, capped: false };
  const belongs = (r: BillPaymentSyncRecord) => (scope.ids ? scope.ids.has(r.id) : r.syncBatchId === scope.syncBatchId);
  for (let page = 1; page <= MAX_PAGES_PER_SCAN; page++) {
    const listed = await api.listBillPaymentsPage({
      ...(scope.companyId === undefined ? {} : { companyId: scope.companyId }),
      // By the service's tags only: a service that ignores the filter costs pages, not correctness. With ids
      // from the caller the service is taken not to know batches, so the filter is not sent at all.
      ...(scope.ids ? {} : { syncBatchId: scope.syncBatchId }),
      status,
      sortBy: 'updatedAt',
      sortOrder,
      page,
      limit: scope.pageSize,
    });
    for (const record of listed.items) {
      if (belongs(record)) result.found.push(record);
      else if (record.syncBatchId === null) result.untagged = true;
    }
    // An empty page that claims a successor would loop forever: stop there.
    if (enough(result.found) || !listed.hasNextPage || listed.items.length === 0) return result;
  }
  result.capped = true;
  return result;
}

/**
 * One look through `GET /bill-payments` filters (A18): any unsettled one answers "not yet"; only then are failed and
 * synced ones counted, newest first, so the ones just settled are on page 1.
 */
export async function observe(api: SyncBatchApi, scope: BatchScope) {
  const any = (found: readonly BillPaymentSyncRecord[]) => found.length > 0;
  const syncing = await scan(api, scope, 'syncing', 'asc', any);
  const pending = syncing.found.length > 0 ? undefined : await scan(api, scope, 'pending', 'asc', any);
  // A capped scan may have missed an unsettled payment: "not yet" is the safe answer.
  if (syncing.found.length > 0 || syncing.capped || (pending && (pending.found.length > 0 || pending.capped)))
    return { kind: 'unsettled' as const, pending: pending?.found.length ?? 0, syncing: syncing.found.length };

  const ids = scope.ids;
  const allFound = (others: number) => (found: readonly BillPaymentSyncRecord[]) =>
    ids !== undefined && found.length + others >= ids.size;
  const failed = await scan(api, scope, 'failed', 'desc', allFound(0));
  const synced = await scan(api, scope, 'synced', 'desc', allFound(failed.found.length));
  const seen = new Set([...failed.found, ...synced.found].map((r) => r.id));
  return {
    kind: 'settled' as const,
    synced: synced.found.length,
    failed: failed.found.map((r): FailedBillPayment => ({ id: r.id, reason: r.syncError, updatedAt: r.updatedAt })),
    /** Named in billPaymentIds but shown by no listing. */
    missing: ids ? [...ids].filter((id) => !seen.has(id)) : [],
    /** The service listed bill payments without a `syncBatchId`: it may not tag them at all (A18). */
    untagged: syncing.untagged || (pending?.untagged ?? false) || failed.untagged || synced.untagged,
  };
}
