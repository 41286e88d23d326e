import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import {
  CATALOGUE_CHUNK_WORKFLOW_TYPE,
  CATALOGUE_OUTCOMES,
  addCatalogueChunkUpdate,
  catalogueChunkWorkflowId,
  catalogueImportWorkflowId,
  catalogueRowsDoneSignal,
  catalogueSchemas,
  getCatalogueImportProgressQuery,
  type CatalogueChunk,
  type CatalogueChunkResult,
  type CataloguePace,
  type CatalogueImportInput,
  type CatalogueImportProgress,
  type CatalogueOutcome,
} from '../src/contracts/catalogue-import.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import type { catalogueChunkWorkflow } from './catalogue-chunk.js';
import { checkInput, describeProblems } from '../src/contracts/sale-input.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { refuse, required } from './update-arguments.js';

/** Chunks are imported one after another: one chunk's pace is the import's, with no other chunk to share it with. */
export const CHUNKS_IN_TURN_PATCH = 'catalogue-chunks-in-turn';

/** A merchant's catalogue, sent in chunks each imported by a chunk workflow; its result is the counts. */
export async function catalogueImportWorkflow(input: CatalogueImportInput): Promise<CatalogueImportProgress> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks.
  const checked = checkInput(catalogueSchemas().input, input);
  if (!checked.ok) refuse(describeProblems('catalogue import input', checked.problems), checked.problems);
  const { workflowId, taskQueue } = workflowInfo();
  const startedAt = Date.now();
  const inTurn = patched(CHUNKS_IN_TURN_PATCH);
  const received = new Map<number, CatalogueChunk>();
  const chunks = new Map<number, ChildWorkflowHandle<typeof catalogueChunkWorkflow>>();
  const rowsDone = new Map<number, { done: number; failed: number; requests: number }>();
  const settled = new Map<number, CatalogueChunkResult>();
  const outcomes = Object.fromEntries(CATALOGUE_OUTCOMES.map((o) => [o, 0])) as Record<CatalogueOutcome, number>;

  const receivedCount = () => chunks.size + received.size;
  const progress = (): CatalogueImportProgress => {
    const counts = [...rowsDone.values()];
    const done = counts.reduce((sum, c) => sum + c.done, 0);
    const minutes = (Date.now() - startedAt) / 60_000;
    return {
      businessId: input.businessId,
      importId: input.importId,
      state: settled.size === input.chunks ? 'done' : receivedCount() === input.chunks ? 'importing' : 'receiving',
      items: input.items,
      chunks: input.chunks,
      chunksReceived: receivedCount(),
      done,
      failed: counts.reduce((sum, c) => sum + c.failed, 0),
      outcomes: { ...outcomes },
      requests: counts.reduce((sum, c) => sum + c.requests, 0),
      startedAt: new Date(startedAt).toISOString(),
      secondsLeft: done > 0 && minutes > 0 ? Math.round(((input.items - done) / (done / minutes)) * 60) : null,
    };
  };
  const showProgress = () => {
    const p = progress();
    setCurrentDetails(
      `${p.state}: ${p.done} of ${p.items} items done, ${p.failed} not registered; ` +
        `${p.chunksReceived} of ${p.chunks} chunks received` +
        (p.state === 'done' || p.secondsLeft === null ? '' : `; about ${Math.ceil(p.secondsLeft / 60)} min left`),
    );
  };

  setHandler(getCatalogueImportProgressQuery, progress);
  setHandler(catalogueRowsDoneSignal, ({ index, done, failed, requests }) => {
    if ((rowsDone.get(index)?.done ?? -1) < done) rowsDone.set(index, { done, failed, requests });
    showProgress();
  });
  setHandler(
    addCatalogueChunkUpdate,
    async (chunk) => {
      if (chunks.has(chunk.index) || received.has(chunk.index)) return { accepted: false };
      if (inTurn) received.set(chunk.index, chunk);
      else chunks.set(chunk.index, await startChunk(chunk));
      showProgress();
      return { accepted: true };
    },
    {
      validator: (argument) => {
        const chunk = required(
          'addChunk',
          '{"index": 0, "rows": [{"line": 2, "row": {…}}]}',
          catalogueSchemas().chunk,
          argument,
        );
        if (chunk.index >= input.chunks)
          throw ApplicationFailure.nonRetryable(
            `index ${chunk.index} is past the import's ${input.chunks} chunks`,
            FAILURE_TYPES.invalidInput,
          );
      },
    },
  );

  function startChunk(chunk: CatalogueChunk, pace?: CataloguePace) {
    return startChild<typeof catalogueChunkWorkflow>(CATALOGUE_CHUNK_WORKFLOW_TYPE, {
      // From the input, not this execution's id: a chunk's id names the business's import whoever started it.
      workflowId: catalogueChunkWorkflowId(catalogueImportWorkflowId(input.businessId, input.importId), chunk.index),
      taskQueue,
      args: [{ businessId: input.businessId, importWorkflowId: workflowId, chunk, ...(pace ? { pace } : {}) }],
      // A chunk's workflow tasks wait for a till's on a busy worker, as its calls wait for the till's on the budget.
      ...(inTurn ? { priority: { priorityKey: PRIORITY.background } } : {}),
    });
  }

  showProgress();
  if (inTurn) {
    let pace: CataloguePace | undefined;
    for (let index = 0; index < input.chunks; index++) {
      await condition(() => received.has(index));
      const handle = await startChunk(received.get(index)!, pace);
      received.delete(index);
      chunks.set(index, handle);
      const result = await handle.result();
      pace = result.pace;
      settle(index, result);
    }
  } else {
    await condition(() => chunks.size === input.chunks);
    for (const [index, handle] of [...chunks].sort(([a], [b]) => a - b)) settle(index, await handle.result());
  }
  await condition(allHandlersFinished);
  return progress();

  function settle(index: number, result: CatalogueChunkResult) {
    settled.set(index, result);
    rowsDone.set(index, {
      requests: result.requests,
      done: result.results.length,
      failed: result.results.filter((r) => r.outcome !== 'registered' && r.outcome !== 'already_registered').length,
    });
    for (const row of result.results) outcomes[row.outcome]++;
    showProgress();
  }
}
