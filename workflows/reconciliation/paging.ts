import { ApplicationFailure } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { DEFAULT_MAX_PAGES, tooManyPagesMessage } from '../../src/reconciliation/limits.js';

/**
 * Reads pages 1, 2, … of `what` until `readPage` says there is none after; a list with more than
 * DEFAULT_MAX_PAGES pages fails the run.
 */
export async function readPages(what: string, readPage: (page: number) => Promise<{ more: boolean }>): Promise<void> {
  for (let page = 1; ; page++) {
    if (!(await readPage(page)).more) return;
    if (page >= DEFAULT_MAX_PAGES) throw tooManyPages(what);
  }
}

/** A list longer than the bound: configuration (the bound), which no retry fixes. */
function tooManyPages(what: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(tooManyPagesMessage(what, DEFAULT_MAX_PAGES), FAILURE_TYPES.notConfigured);
}
