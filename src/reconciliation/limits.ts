// No imports: workflow code imports this file.

export const PAGE_SIZE = 100;
/**
 * A guard, not a size: a run reads the invoices of its period and the payments back to the period's start less the
 * suggestion window, so a list longer than 500 pages of 100 means a business far busier than the period suits (or a
 * service that never ends a list).
 */
export const DEFAULT_MAX_PAGES = 500;

/**
 * How many entries each list of the workflow's result keeps. Matched and rejected invoices need nobody, and matched
 * ones are most of a business's invoices: the result keeps their counts only.
 */
export const RESULT_LIST_LIMITS = {
  matched: 0,
  rejectedPurchases: 0,
  suggested: 200,
  amountMismatches: 200,
  unpaidPurchases: 200,
  unmatchedPayments: 200,
  ties: 200,
} as const;

/** Ids kept in one entry of the workflow's result (an invoice's part payments, a tie's invoices and payments). */
export const RESULT_IDS_PER_ENTRY = 20;

/** The workflow's summary stays under this size whatever the ids' lengths: half of Temporal's 256 KB warning. */
export const RESULT_MAX_BYTES = 128 * 1024;

/** Why a list longer than the bound stops the run: a shorter period is the fix, so nothing retries it. */
export function tooManyPagesMessage(what: string, maxPages: number): string {
  return (
    `${what} has more than ${maxPages} pages of ${PAGE_SIZE}; reconcile a shorter period ` +
    `(RECONCILE_PERIOD_DAYS, --period-days) or raise maxPages`
  );
}

/**
 * Reads pages 1, 2, … until a page says there is none after; a list longer than `maxPages` throws `fail`'s error.
 * A page's `more` may also be false because the rest of the list is older than the period.
 */
export function pageReader(fail: (message: string) => Error, maxPages = DEFAULT_MAX_PAGES) {
  return async (what: string, readPage: (page: number) => Promise<{ more: boolean }>): Promise<void> => {
    for (let page = 1; (await readPage(page)).more; page++)
      if (page >= maxPages) throw fail(tooManyPagesMessage(what, maxPages));
  };
}
