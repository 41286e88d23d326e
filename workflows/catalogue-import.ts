import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
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
  type CatalogueImportCarried,
  type CatalogueImportInput,
  type CatalogueImportProgress,
  type CatalogueOutcome,
} from '../src/contracts/catalogue-import.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import type { catalogueChunkWorkflow } from './catalogue-chunk.js';
import { checkInput, describeProblems } from '../src/contracts/sale-input.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { refuse, required } from './update-arguments.js';

/**
 * Waiting chunks a run carries to the next at most (their JSON's characters): well under Temporal's 2 MB payload
 * limit. A run waiting on more moves to the new version at a later chunk's end, when fewer wait.
 */
const CARRIED_CHUNKS_MAX_CHARS = 1_000_000;

/** Each number read as a count, or 0: the state may have been written by another version (or by hand). */
const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0);

/**
 * A merchant's catalogue, sent in chunks each imported by a chunk workflow; its result is the counts. `carried`: set
 * only by the workflow itself, when it continues as new between chunks (onto a new Worker Deployment Version).
 */
export async function catalogueImportWorkflow(
  input: CatalogueImportInput,
  carried?: CatalogueImportCarried,
): Promise<CatalogueImportProgress> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks.
  const checked = checkInput(catalogueSchemas().input, input);
  if (!checked.ok) refuse(describeProblems('catalogue import input', checked.problems), checked.problems);
  const { workflowId, taskQueue } = workflowInfo();
  const startedAt = typeof carried?.startedAt === 'number' ? carried.startedAt : Date.now();
  const carriedChunks = Array.isArray(carried?.waiting) ? carried.waiting : [];
  const waiting = new Map<number, CatalogueChunk>(carriedChunks.map((chunk) => [chunk.index, chunk]));
  /** Every chunk below this index has settled; the one at it, when `running`, is the chunk workflow in flight. */
  let settledChunks = count(carried?.settledChunks);
  let running = false;
  /** The settled chunks' counts, and the running chunk's as it reports them. */
  const settledRows = {
    done: count(carried?.done),
    failed: count(carried?.failed),
    requests: count(carried?.requests),
  };
  let runningRows = { done: 0, failed: 0, requests: 0 };
  const outcomes = Object.fromEntries(CATALOGUE_OUTCOMES.map((o) => [o, count(carried?.outcomes?.[o])])) as Record<
    CatalogueOutcome,
    number
  >;
  let pace = carried?.pace;

  const receivedCount = () => settledChunks + (running ? 1 : 0) + waiting.size;
  const progress = (): CatalogueImportProgress => {
    const done = settledRows.done + runningRows.done;
    const minutes = (Date.now() - startedAt) / 60_000;
    return {
      businessId: input.businessId,
      importId: input.importId,
      state: settledChunks === input.chunks ? 'done' : receivedCount() === input.chunks ? 'importing' : 'receiving',
      items: input.items,
      chunks: input.chunks,
      chunksReceived: receivedCount(),
      done,
      failed: settledRows.failed + runningRows.failed,
      outcomes: { ...outcomes },
      requests: settledRows.requests + runningRows.requests,
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
    if (running && index === settledChunks && runningRows.done < done) runningRows = { done, failed, requests };
    showProgress();
  });
  setHandler(
    addCatalogueChunkUpdate,
    (chunk) => {
      const taken =
        chunk.index < settledChunks || (running && chunk.index === settledChunks) || waiting.has(chunk.index);
      if (taken) return { accepted: false };
      waiting.set(chunk.index, chunk);
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

  // A Worker Deployment Version newer than the one this run is pinned to: the rest of the import moves to it, between
  // chunks, carrying what it has counted, its pace and the chunks it took and has not started.
  const movesToNewVersion = () =>
    workflowInfo().targetWorkerDeploymentVersionChanged &&
    JSON.stringify([...waiting.values()]).length <= CARRIED_CHUNKS_MAX_CHARS;
  const continueOnNewVersion = makeContinueAsNewFunc<typeof catalogueImportWorkflow>({
    initialVersioningBehavior: 'AUTO_UPGRADE',
  });

  showProgress();
  while (settledChunks < input.chunks) {
    await condition(() => waiting.has(settledChunks) || movesToNewVersion());
    if (!waiting.has(settledChunks)) break;
    const chunk = waiting.get(settledChunks)!;
    const handle = await startChild<typeof catalogueChunkWorkflow>(CATALOGUE_CHUNK_WORKFLOW_TYPE, {
      // From the input, not this execution's id: a chunk's id names the business's import whoever started it.
      workflowId: catalogueChunkWorkflowId(catalogueImportWorkflowId(input.businessId, input.importId), chunk.index),
      taskQueue,
      args: [{ businessId: input.businessId, importWorkflowId: workflowId, chunk, ...(pace ? { pace } : {}) }],
      // A chunk's workflow tasks wait for a till's on a busy worker, as its calls wait for the till's on the budget.
      priority: { priorityKey: PRIORITY.background },
    });
    waiting.delete(chunk.index);
    running = true;
    const result = await handle.result();
    pace = result.pace;
    settle(result);
    if (settledChunks < input.chunks && movesToNewVersion()) break;
  }
  await condition(allHandlersFinished);
  if (settledChunks < input.chunks) {
    const next: CatalogueImportCarried = {
      settledChunks,
      ...settledRows,
      outcomes,
      startedAt,
      ...(pace ? { pace } : {}),
      waiting: [...waiting.values()],
    };
    return continueOnNewVersion(input, next);
  }
  return progress();

  function settle(result: CatalogueChunkResult) {
    running = false;
    runningRows = { done: 0, failed: 0, requests: 0 };
    settledRows.done += result.results.length;
    settledRows.failed += result.results.filter(
      (r) => r.outcome !== 'registered' && r.outcome !== 'already_registered',
    ).length;
    settledRows.requests += result.requests;
    for (const row of result.results) outcomes[row.outcome]++;
    settledChunks++;
    showProgress();
  }
}
