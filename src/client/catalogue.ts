// The same file imported again is the same import: its id is a digest of the business and rows.
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import {
  CATALOGUE_CHUNK_ROWS_MAX,
  CATALOGUE_IMPORT_CHUNKS_MAX,
  CATALOGUE_IMPORT_WORKFLOW_TYPE,
  addCatalogueChunkUpdate,
  catalogueChunkWorkflowId,
  catalogueImportWorkflowId,
  getCatalogueImportProgressQuery,
  type CatalogueChunk,
  type CatalogueChunkInput,
  type CatalogueChunkResult,
  type CatalogueImportInput,
  type CatalogueImportProgress,
  type CatalogueItemResult,
  type CatalogueRow,
} from '../contracts/catalogue-import.js';
import {
  getItemRegistrationStateQuery,
  itemFixedSignal,
  itemRegistrationWorkflowId,
  type ItemRegistrationState,
} from '../contracts/item-registration.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { WorkflowOperationError } from './errors.js';
import { runOperation } from './sales-client.js';

type CatalogueImportWorkflow = (input: CatalogueImportInput) => Promise<CatalogueImportProgress>;
type CatalogueChunkWorkflow = (input: CatalogueChunkInput) => Promise<CatalogueChunkResult>;

export class CatalogueSizeError extends Error {
  override readonly name = 'CatalogueSizeError';
}

export type CatalogueImportOperation = 'addChunk';

export class CatalogueImportOperationError extends WorkflowOperationError<CatalogueImportOperation> {
  override readonly name = 'CatalogueImportOperationError';
}

export function catalogueImportId(businessId: string, rows: ReadonlyArray<{ line: number; row: CatalogueRow }>) {
  return createHash('sha256').update(JSON.stringify({ businessId, rows })).digest('hex').slice(0, 16);
}

export async function startCatalogueImport(
  client: Client,
  businessId: string,
  rows: ReadonlyArray<{ line: number; row: CatalogueRow }>,
  taskQueue = WORKFLOW_TASK_QUEUE,
): Promise<{ importId: string; workflowId: string; chunksSent: number; chunks: number }> {
  const chunks: CatalogueChunk[] = [];
  for (let start = 0; start < rows.length; start += CATALOGUE_CHUNK_ROWS_MAX)
    chunks.push({ index: chunks.length, rows: rows.slice(start, start + CATALOGUE_CHUNK_ROWS_MAX) });
  if (chunks.length === 0 || chunks.length > CATALOGUE_IMPORT_CHUNKS_MAX)
    throw new CatalogueSizeError(
      `an import takes 1 to ${CATALOGUE_IMPORT_CHUNKS_MAX * CATALOGUE_CHUNK_ROWS_MAX} rows (got ${rows.length}): ` +
        'import a larger catalogue as several files',
    );
  const importId = catalogueImportId(businessId, rows);
  const workflowId = catalogueImportWorkflowId(businessId, importId);
  let handle: WorkflowHandle<CatalogueImportWorkflow>;
  try {
    handle = await client.workflow.start<CatalogueImportWorkflow>(CATALOGUE_IMPORT_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [{ businessId, importId, items: rows.length, chunks: chunks.length }],
      // A running import is the one to feed; one that ended stays the file's import (its report is there).
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return { importId, workflowId, chunksSent: 0, chunks: chunks.length };
  }
  // An import already running may hold some chunks: they are not counted as sent.
  let chunksSent = 0;
  for (const chunk of chunks) {
    // A chunk is taken once, so an update refused while the import's task failed (a burst of chunks) is sent again.
    const { accepted } = await runOperation(
      CatalogueImportOperationError,
      'addChunk',
      workflowId,
      () => handle.executeUpdate(addCatalogueChunkUpdate, { args: [chunk] }),
      { subject: 'catalogue import ' },
    );
    if (accepted) chunksSent++;
  }
  return { importId, workflowId, chunksSent, chunks: chunks.length };
}

export async function catalogueImportProgress(client: Client, businessId: string, importId: string) {
  return client.workflow
    .getHandle(catalogueImportWorkflowId(businessId, importId))
    .query(getCatalogueImportProgressQuery);
}

export async function waitForCatalogueImport(
  client: Client,
  businessId: string,
  importId: string,
  onProgress: (progress: CatalogueImportProgress) => void,
  everyMs = 1_000,
): Promise<CatalogueImportProgress> {
  const handle = client.workflow.getHandle<CatalogueImportWorkflow>(catalogueImportWorkflowId(businessId, importId));
  let ended = false;
  const result = handle.result().finally(() => (ended = true));
  while (!ended) {
    // A query the worker could not answer just now is skipped: the next one tells.
    const progress = await handle.query(getCatalogueImportProgressQuery).catch(() => undefined);
    if (progress) onProgress(progress);
    await Promise.race([result.catch(() => undefined), new Promise((done) => setTimeout(done, everyMs))]);
  }
  return result;
}

/** One row per line of the file, in order: the chunk workflows' results, once the import has ended. */
export async function catalogueImportReport(client: Client, businessId: string, importId: string) {
  const workflowId = catalogueImportWorkflowId(businessId, importId);
  const handle = client.workflow.getHandle<CatalogueImportWorkflow>(workflowId);
  const progress = await handle.query(getCatalogueImportProgressQuery);
  if (progress.state !== 'done')
    throw new Error(
      `import ${importId} has not ended (${progress.done} of ${progress.items} items done): ` +
        'its report is there once it has (`status` follows it)',
    );
  const { chunks } = await handle.result();
  const results: CatalogueItemResult[] = [];
  for (let index = 0; index < chunks; index++) {
    const chunk = await client.workflow
      .getHandle<CatalogueChunkWorkflow>(catalogueChunkWorkflowId(workflowId, index))
      .result();
    results.push(...chunk.results);
  }
  return results;
}

const NEEDS_FIXING = new Set<CatalogueItemResult['outcome']>(['needs_product_type', 'needs_classification']);

/** Only rows fixable in the dashboard are retried: a conflict needs another file, a refusal another item. */
export async function retryCatalogueImport(client: Client, businessId: string, importId: string, waitMs = 60_000) {
  const retried = (await catalogueImportReport(client, businessId, importId)).filter(
    (row) => NEEDS_FIXING.has(row.outcome) && row.itemId !== null,
  );
  return Promise.all(
    retried.map(async (row) => {
      const handle = client.workflow.getHandle(itemRegistrationWorkflowId(businessId, row.itemId!));
      const before = await handle.query(getItemRegistrationStateQuery);
      if (before.status !== 'needs_fixing') return outcomeOf(row, before);
      await handle.signal(itemFixedSignal);
      const deadline = Date.now() + waitMs;
      for (;;) {
        const now = await handle.query(getItemRegistrationStateQuery);
        const heard = (now.attempts ?? 0) > (before.attempts ?? 0) && now.status !== 'registering';
        if (heard || Date.now() > deadline) return outcomeOf(row, now);
        await new Promise((done) => setTimeout(done, 500));
      }
    }),
  );
}

function outcomeOf(row: CatalogueItemResult, state: ItemRegistrationState): CatalogueItemResult {
  if (state.status === 'registered') return { ...row, outcome: 'registered', reason: null };
  if (state.status === 'failed') return { ...row, outcome: 'refused', reason: 'its registration ended unfixed' };
  if (state.needs === null) return row;
  return { ...row, outcome: state.needs.productType ? 'needs_product_type' : 'needs_classification' };
}
