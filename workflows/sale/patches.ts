/**
 * Every patch of the sale workflow, in the order they were introduced. Each guards a change of the commands a
 * sale issues; executions started before it replay the old branch. Deprecate one only once no sale started
 * before it can still be open (refund windows end after 30 days by default, 365 at most).
 */

/** 0.2: the refund's credit note is issued by the process, not inside the refund update's handler. */
export const REFUND_BY_PROCESS_PATCH = 'refund-issued-by-process';

/**
 * 0.4, the lean path to a signed receipt:
 * - the item check and the sale go in one activity (`signSale`), so a sale whose items are registered reaches
 *   its receipt after one workflow task and one activity dispatch;
 * - a document in flight whose outcome a callback will announce is not polled until the callback is overdue;
 * - a sale's stock movements are sent together, not one workflow task after another;
 * - search attributes are written only when their value changes.
 */
export const LEAN_SALE_PATH_PATCH = 'lean-sale-path';

/**
 * 0.5, every door holds what comes through it:
 * - the sale checks its own input first and ends at once, naming the fields, when it cannot use it;
 * - Temporal's own cancellation is an operator's cancel while the sale is parked unsigned, refused otherwise;
 * - `cancel` and `retry` answer once the process has acted on them;
 * - after a rejection not known to be transient, the service's item list (not the cause code) decides whether
 *   registering an item and resubmitting can fix it;
 * - `AttentionReason` is written with every `NeedsAttention`.
 */
export const DOORS_HELD_PATCH = 'doors-held';

/**
 * 0.8, stock that keeps up with the tills (issue 17): a signed sale hands its stock lines to its branch's stock
 * ledger (workflows/stock-ledger.ts) in one local activity instead of sending a movement per line, and a refund hands
 * its restock lines the same way; the sale no longer waits on stock to close, and the ledger tells it which movement
 * carried each line. Sales started before it report their own movements to the end.
 */
export const STOCK_LEDGER_PATCH = 'stock-ledger';
