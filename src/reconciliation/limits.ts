// No imports: workflow code imports this file.

export const PAGE_SIZE = 100;
/** 500 pages of 100: far beyond one business's invoices, near enough to stop a service that never ends a list. */
export const DEFAULT_MAX_PAGES = 500;

/** Why a list longer than the bound stops the run: raising the bound is the only fix, so nothing retries it. */
export function tooManyPagesMessage(what: string, maxPages: number): string {
  return `${what} has more than ${maxPages} pages of ${PAGE_SIZE}; raise maxPages to reconcile it`;
}

/** Reads pages 1, 2, … until a page says there is none after; a list longer than `maxPages` throws `fail`'s error. */
export function pageReader(fail: (message: string) => Error, maxPages = DEFAULT_MAX_PAGES) {
  return async (what: string, readPage: (page: number) => Promise<{ more: boolean }>): Promise<void> => {
    for (let page = 1; (await readPage(page)).more; page++)
      if (page >= maxPages) throw fail(tooManyPagesMessage(what, maxPages));
  };
}
