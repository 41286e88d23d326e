import { continueAsNew, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { failsTheWorkflow } from './metrics.js';
import {
  getPurchasesSyncProgressQuery,
  type PurchasesSyncInput,
  type PurchasesSyncResult,
} from '../src/contracts/purchases-sync.js';
import { placeOnBudget } from './placement.js';
import { purchasesSyncActivities } from './purchases-sync/activities.js';
import type { PurchasesSync } from './purchases-sync/context.js';
import { deliver } from './purchases-sync/delivery.js';
import { PurchasesSyncRecord, countFailedSync } from './purchases-sync/record.js';
import { settingsOf } from './purchases-sync/settings.js';

/** Ledgers beyond this many invoices approach the 2 MB limit of one payload (about 40 bytes an invoice). */
const LEDGER_WARNING_SIZE = 25_000;

/**
 * One sync of a business's supplier invoices (docs/purchases-sync.md): one pull, then the list page by page, each
 * page its own activity so a till's sale can go between any two; every invoice new or changed goes to the
 * business's sink as an event with a stable id. Continues as new every `pagesPerRun` pages. Its end is counted
 * once, by the run it ends in (succeeded in closeSync, failed here).
 */
export async function purchasesSyncWorkflow(input: PurchasesSyncInput): Promise<PurchasesSyncResult> {
  try {
    return await syncRun(input);
  } catch (err) {
    if (failsTheWorkflow(err)) countFailedSync(input.businessId);
    throw err;
  }
}

async function syncRun(input: PurchasesSyncInput): Promise<PurchasesSyncResult> {
  const settings = settingsOf(input.options);
  const record = new PurchasesSyncRecord(input.businessId, input.carry);
  setHandler(getPurchasesSyncProgressQuery, () => record.progress());
  record.show(record.state.runs > 1 ? `continuing (run ${record.state.runs})` : 'pulling');
  const route = await placeOnBudget(input.businessId, false);
  const sync: PurchasesSync = { input, settings, record, api: purchasesSyncActivities(route, settings) };
  await pullOnce(sync);
  for (let pagesThisRun = 1; ; pagesThisRun++) {
    const more = await syncNextPage(sync);
    if (!more) return closeSync(sync);
    if (pagesThisRun >= sync.settings.pagesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof purchasesSyncWorkflow>({ ...input, carry: sync.record.nextRun() });
    }
  }
}

/** The service fetches the latest invoices from the authority once a sync: a continued run does not again. */
async function pullOnce({ input, record, api }: PurchasesSync): Promise<void> {
  if (record.state.pulled) return;
  await api.compliance.pullPurchases({ businessId: input.businessId });
  record.pulled();
}

/** Lists the next page and delivers what is new or changed on it; false once the list is done. */
async function syncNextPage(sync: PurchasesSync): Promise<boolean> {
  const { input, settings, record, api } = sync;
  const page = await api.compliance.listPurchasesPage({
    businessId: input.businessId,
    cursor: record.state.cursor,
    pageSize: settings.pageSize,
  });
  await deliver(sync, record.compared(page));
  record.advanced(page.nextCursor);
  return page.nextCursor !== null;
}

function closeSync({ input, record }: PurchasesSync): PurchasesSyncResult {
  const { businessId } = input;
  const size = Object.keys(record.state.ledger).length;
  if (size > LEDGER_WARNING_SIZE)
    log.warn('the purchases ledger is large; payloads are limited to 2 MB', { businessId, invoices: size });
  log.info('purchases sync done', { businessId, ...record.state.counts });
  // Invoices of `previous` not listed any more are dropped: the ledger mirrors what the service lists.
  return record.finished();
}
