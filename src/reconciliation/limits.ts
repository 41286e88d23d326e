// No imports: workflow code imports this file.

export const PAGE_SIZE = 100;
/** 500 pages of 100: far beyond one business's invoices, near enough to stop a service that never ends a list. */
export const DEFAULT_MAX_PAGES = 500;

/** Why a list longer than the bound stops the run: raising the bound is the only fix, so nothing retries it. */
export function tooManyPagesMessage(what: string, maxPages: number): string {
  return `${what} has more than ${maxPages} pages of ${PAGE_SIZE}; raise maxPages to reconcile it`;
}
