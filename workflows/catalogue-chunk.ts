import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  log,
  patched,
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

/** Rows of a chunk in flight at once, unpaced: the first imports' way. */
const ROWS_IN_FLIGHT = 4;
/** Rows of a paced chunk in flight at most: the pace decides; rows held up (a worker killed) do not stop the rest. */
const PACED_ROWS_IN_FLIGHT = 16;
export const PACED_ROWS_PATCH = 'catalogue-rows-paced';
export const PACE_CARRIED_PATCH = 'catalogue-pace-carried';
export const HELD_UP_SPENDS_NOTHING_PATCH = 'catalogue-held-up-spends-nothing';
/** The pace leaves the limiter a slot for a till: judged from the chunk's least pickup, kept under its last mark. */
export const PACE_MARGIN_PATCH = 'catalogue-pace-leaves-margin';
/** The creation hands an unregistered item to its registration itself: one task fewer for each row. */
export const REGISTRATION_WITH_CREATION_PATCH = 'catalogue-registration-with-creation';
/** The pace stays under what the service's window says the rest of the application leaves. */
export const PACE_READS_WINDOW_PATCH = 'catalogue-pace-reads-window';
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

  const paced = patched(PACED_ROWS_PATCH);
  const route = await placeOnBudget(businessId, true);
  const pace = paced
    ? new RowPace(route.requestsPerMinute, input.pace, {
        carried: patched(PACE_CARRIED_PATCH),
        heldUpSpendsNothing: patched(HELD_UP_SPENDS_NOTHING_PATCH),
        leavesMargin: patched(PACE_MARGIN_PATCH),
        readsWindow: patched(PACE_READS_WINDOW_PATCH),
      })
    : undefined;
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

  const waitFor = patched(REGISTRATION_WITH_CREATION_PATCH) ? { workflowId, taskQueue } : undefined;
  let requests = 0;
  async function itemOf(row: CatalogueRow): Promise<CatalogueItemFound | { refused: string }> {
    for (;;) {
      try {
        requests++;
        // No await at all unpaced: an extra turn of the promise queue would reorder the lanes' commands.
        const letGoAt = pace ? await pace.turn() : 0;
        let queuedMs: number | undefined;
        let window: CatalogueItemFound['window'];
        try {
          const created = await createCatalogueItem({ businessId, row, ...(waitFor ? { waitFor } : {}) });
          ({ queuedMs, window } = created);
          return created;
        } finally {
          pace?.started(letGoAt, queuedMs);
          pace?.windowRead(window);
        }
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : undefined;
        if (!(cause instanceof ApplicationFailure)) throw err;
        if (!isAmbiguousWrite(cause.type)) return { refused: `${cause.type ?? 'error'}: ${cause.message}` };
        requests++;
        const findAt = pace ? await pace.turn() : 0;
        const evidence = await findCatalogueItem({ businessId, row }).finally(() => pace?.started(findAt, undefined));
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
    if (!item.registrationRequested)
      await requestItemRegistration({
        businessId,
        itemId: item.itemId,
        ...(row.branchId === undefined ? {} : { branchId: row.branchId }),
        waiterWorkflowId: workflowId,
        taskQueue,
      });
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
  const lanes = pace ? PACED_ROWS_IN_FLIGHT : ROWS_IN_FLIGHT;
  await Promise.all(Array.from({ length: Math.min(lanes, chunk.rows.length) }, lane));
  await tellImport();
  return { index: chunk.index, results, requests, ...(pace ? { pace: pace.state } : {}) };
}
