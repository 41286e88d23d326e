/**
 * Stock that comes in, as the checker expects it: from the run's plan (which item each supplier line names, each
 * business's start date) and the sandbox's record of each invoice (its review status when the checker reads),
 * never from the stock-in's state. An invoice counts when its status is `confirmed` and it is dated on or after its
 * business's start date; then each of its lines adds its quantity to the item it names at the invoice's branch.
 * Whatever the invoice went through before (confirmed, taken back, confirmed again) nets out to that.
 */
import type { StockMovement } from '../../sandbox/compliance/model.js';
import type { ItemBalance, IncomingStockLine } from './exactly-once.js';
import { netDifference } from './exactly-once.js';

/** The prefix of the referenceId of a stock-in's line (docs/stock-in.md). */
export const STOCK_IN_MOVEMENT_PREFIX = 'sin-v1:';

/** A supplier invoice of the run, as planned. */
export interface IncomingInvoice {
  businessId: string;
  branchId: string;
  purchaseId: string;
  invoiceDate: string;
  lines: ReadonlyArray<{ itemId: string; quantity: number }>;
}

/** What the checker knows of incoming stock: the plan, and what the sandbox holds of the invoices. */
export interface IncomingInput {
  invoices: readonly IncomingInvoice[];
  /** The sandbox's supplier invoices (its inspection API); only `businessId`, `purchase.id` and its status are read. */
  recorded: ReadonlyArray<{ businessId: string; purchase: { id: string; status: string } }>;
  /** Each business taking stock in, and the date it takes it from. */
  from: Readonly<Record<string, string>>;
}

export interface IncomingVerdict {
  invoices: number;
  /** Invoices that count (confirmed, on or after the start date), their lines and their quantity. */
  counted: number;
  lines: number;
  expectedQuantity: number;
  /** Over the items invoices name: recorded ADD − DEDUCT less what the sales and refunds ask of them. */
  recordedQuantity: number;
  /**
   * Movements of a stock-in's line alone (`sin-v1:…`), per action: whether the run took anything back. Lines merged
   * with others are in `stk:…` movements, not counted here.
   */
  movements: { add: number; deduct: number };
  /** Items invoices name whose net is off. */
  mismatches: number;
  /** Planned invoices the sandbox does not hold (they were never handed to it): nothing is known of them. */
  notInSandbox: string[];
  ok: boolean;
}

/**
 * The lines the exactly-once rule judges by net: those of every invoice the stock-in may move (dated on or after its
 * business's start date), with their quantity where the invoice counts. An invoice before the start date must move
 * nothing at all, so its items keep the separate equalities.
 */
export function incomingLines(input: IncomingInput): IncomingStockLine[] {
  const status = statusesOf(input);
  return input.invoices
    .filter((invoice) => fromStart(invoice, input.from))
    .flatMap((invoice) => {
      const counts = counted(invoice, status, input.from);
      return invoice.lines.map((line) => ({
        businessId: invoice.businessId,
        branchId: invoice.branchId,
        itemId: line.itemId,
        quantity: counts ? line.quantity : 0,
      }));
    });
}

export function incomingVerdict(
  input: IncomingInput,
  items: readonly ItemBalance[],
  movements: readonly StockMovement[],
): IncomingVerdict {
  const status = statusesOf(input);
  const counting = input.invoices.filter((invoice) => counted(invoice, status, input.from));
  const named = items.filter((b) => b.net);
  const notInSandbox = input.invoices
    .filter((invoice) => !status.has(key(invoice.businessId, invoice.purchaseId)))
    .map((invoice) => invoice.purchaseId);
  const mismatches = named.filter((b) => netDifference(b) !== 0).length;
  const alone = movements.filter((m) => m.quantity > 0 && m.referenceId?.startsWith(STOCK_IN_MOVEMENT_PREFIX));
  return {
    invoices: input.invoices.length,
    counted: counting.length,
    lines: counting.reduce((n, invoice) => n + invoice.lines.length, 0),
    expectedQuantity: counting.reduce((n, invoice) => n + invoice.lines.reduce((q, l) => q + l.quantity, 0), 0),
    recordedQuantity: named.reduce((n, b) => n + b.added - b.deducted - (b.restocked - b.sold), 0),
    movements: {
      add: alone.filter((m) => m.action === 'ADD').length,
      deduct: alone.filter((m) => m.action === 'DEDUCT').length,
    },
    mismatches,
    notInSandbox,
    ok: mismatches === 0 && notInSandbox.length === 0,
  };
}

const key = (businessId: string, purchaseId: string) => `${businessId}|${purchaseId}`;

function statusesOf(input: IncomingInput): Map<string, string> {
  return new Map(input.recorded.map((r) => [key(r.businessId, r.purchase.id), r.purchase.status]));
}

function fromStart(invoice: IncomingInvoice, from: Readonly<Record<string, string>>): boolean {
  const start = from[invoice.businessId];
  return start !== undefined && invoice.invoiceDate >= start;
}

function counted(
  invoice: IncomingInvoice,
  status: ReadonlyMap<string, string>,
  from: Readonly<Record<string, string>>,
): boolean {
  return fromStart(invoice, from) && status.get(key(invoice.businessId, invoice.purchaseId)) === 'confirmed';
}
