import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CatalogueItemFound } from '../activities/catalogue.js';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from './activity-options.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { RowPace } from './catalogue-pace.js';
import { placeOnBudget } from './placement.js';
import {
  catalogueRowsDoneSignal,
  type CatalogueChunkInput,
  type CatalogueChunkResult,
  type CatalogueItemResult,
  type CatalogueRow,
} from '../src/contracts/catalogue-import.js';
import { isAmbiguousWrite } from '../src/contracts/failures.js';
import type { ItemRegistrationOutcome } from '../src/contracts/item-registration.js';
import { itemRegistrationSettledSignal } from '../src/contracts/sale.js';

/**
 * Rows of a chunk in flight at most: the pace decides, and rows held up (a worker killed with their task) do not stop
 * the rest; this bounds the tasks a chunk can have waiting in the queue when something else holds them up.
 */
const ROWS_IN_FLIGHT = 16;
/** The import hears of the rows done every this many. */
const PROGRESS_EVERY = 25;

/** Each row's item created (or found and compared), then registered by the item registration workflow sales use. */
export async function catalogueChunkWorkflow(input: CatalogueChunkInput): Promise<CatalogueChunkResult> {
  const { businessId, importWorkflowId, chunk } = input;
  const { workflowId, taskQueue } = workflowInfo();
  const registrations = new Map<string, ItemRegistrationOutcome>();
  // The first word on each item is its outcome here; an item that needs fixing goes on waiting in its own workflow.
  setHandler(itemRegistrationSettledSignal, (outcome) => {
    if (!registrations.has(outcome.itemId)) registrations.set(outcome.itemId, outcome);
  });

  const route = await placeOnBudget(businessId, true);
  const pace = new RowPace(route.requestsPerMinute, input.pace);
  const { createCatalogueItem, findCatalogueItem } = proxyActivities<ActivitiesOn<'compliance'>>({
    taskQueue: route.complianceQueue,
    startToCloseTimeout: '60 seconds',
    // A call heartbeats while it waits: one lost with a killed worker is sent again in seconds, not a minute.
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
    // No overall limit: an outage is waited out in the retries; a refusal or a lost answer is not retried.
    retry: API_RETRY,
    priority: { priorityKey: PRIORITY.background, fairnessKey: route.fairnessKey },
  });
  const { requestItemRegistration } = proxyActivities<ActivitiesOn<'workflow'>>({
    // One signal-with-start, safe to repeat: one lost with a killed worker holds its row no longer than this.
    startToCloseTimeout: '10 seconds',
    retry: API_RETRY,
  });

  const waitFor = { workflowId, taskQueue };
  let requests = 0;
  async function itemOf(row: CatalogueRow): Promise<CatalogueItemFound | { refused: string }> {
    for (;;) {
      try {
        requests++;
        await pace.turn();
        let created: CatalogueItemFound | undefined;
        try {
          created = await createCatalogueItem({ businessId, row, waitFor });
          return created;
        } finally {
          // The creation, and the registration it handed the item to: the import's, in the window.
          pace.counted(created?.registrationRequested ? 2 : 1, created?.window, created?.queuedMs);
        }
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : undefined;
        if (!(cause instanceof ApplicationFailure)) throw err;
        if (!isAmbiguousWrite(cause.type)) return { refused: `${cause.type ?? 'error'}: ${cause.message}` };
        requests++;
        await pace.turn();
        const evidence = await findCatalogueItem({ businessId, row }).finally(() => pace.counted(1, undefined));
        if (evidence) return evidence;
        // Not in the service's list: the creation did not happen, so creating again is safe.
        log.info('a lost creation was not taken: creating again', { externalId: row.externalId });
      }
    }
  }

  async function importRow(line: number, row: CatalogueRow): Promise<CatalogueItemResult> {
    const result = (outcome: CatalogueItemResult['outcome'], itemId: string | null, reason: string | null = null) => ({
      line,
      externalId: row.externalId,
      outcome,
      itemId,
      reason,
    });
    const item = await itemOf(row);
    if ('refused' in item) return result('refused', null, item.refused);
    if (item.differs.length > 0)
      return result('conflict', item.itemId, `the service holds ${item.differs.join(', ')} otherwise`);
    if (item.registered) return result(item.created ? 'registered' : 'already_registered', item.itemId);
    requests++;
    if (!item.registrationRequested) {
      pace.counted(1, undefined);
      await requestItemRegistration({
        businessId,
        itemId: item.itemId,
        ...(row.branchId === undefined ? {} : { branchId: row.branchId }),
        waiterWorkflowId: workflowId,
        taskQueue,
      });
    }
    await condition(() => registrations.has(item.itemId));
    const outcome = registrations.get(item.itemId)!;
    if (outcome.status === 'registered') return result('registered', item.itemId);
    if (outcome.status === 'failed') return result('refused', item.itemId, outcome.reason ?? 'registration failed');
    return result(outcome.needs?.productType ? 'needs_product_type' : 'needs_classification', item.itemId);
  }

  const results: CatalogueItemResult[] = new Array(chunk.rows.length);
  let done = 0;
  let failed = 0;
  let told = 0;
  const tellImport = async () => {
    if (done === told) return;
    told = done;
    await getExternalWorkflowHandle(importWorkflowId).signal(catalogueRowsDoneSignal, {
      index: chunk.index,
      done,
      failed,
      requests,
    });
  };
  let next = 0;
  const lane = async () => {
    while (next < chunk.rows.length) {
      const at = next++;
      const { line, row } = chunk.rows[at]!;
      results[at] = await importRow(line, row);
      done++;
      if (!['registered', 'already_registered'].includes(results[at].outcome)) failed++;
      if (done - told >= PROGRESS_EVERY) await tellImport();
    }
  };
  await Promise.all(Array.from({ length: Math.min(ROWS_IN_FLIGHT, chunk.rows.length) }, lane));
  await tellImport();
  return { index: chunk.index, results, requests, pace: pace.state };
}
