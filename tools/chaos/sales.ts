/**
 * The sales of a chaos run, decided from the seed alone: business, branch, 1–3 lines, the authority path
 * (immediate, ASYNC- completing later, FLAKY- refused once then retried), when it starts, and for 20 % of them
 * the refund asked once it is signed.
 */
import {
  CREDIT_NOTE_REASONS,
  NON_RESTOCKING_REASONS,
  type CreditNoteReason,
} from '../../src/contracts/compliance-rules.js';
import type { SaleInput } from '../../src/contracts/sale.js';
import { deriveSeed, Dice } from './seed.js';
import type { CatalogBusiness } from './world.js';

export const REFUNDED_SHARE = 0.2;
const ASYNC_SHARE = 0.15;
const FLAKY_SHARE = 0.1;
/** Sales are started over this share of the fault time, so every one meets the faults. */
export const START_SPREAD = 0.8;
/** The refund window of the sales a refund is planned for: far beyond the run, so every refund is taken. */
const REFUND_WINDOW_DAYS = 1;

export type SalePath = 'immediate' | 'async' | 'flaky';

export interface PlannedRefund {
  reason: CreditNoteReason;
  /** What the refund request says. */
  restock: boolean;
  /** Whether goods go back on the shelf: asked for, and not damaged or wasted goods. */
  restocking: boolean;
  /** The credit note's own trader invoice number. */
  traderInvoiceNumber: string;
}

export interface PlannedSale {
  index: number;
  path: SalePath;
  startAtMs: number;
  input: SaleInput;
  refund: PlannedRefund | null;
}

const PREFIX: Record<SalePath, string> = { immediate: '', async: 'ASYNC-', flaky: 'FLAKY-' };

/** Today (UTC) as the API's dates. */
export function isoDate(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

export function plannedSales(options: {
  seed: number;
  sales: number;
  faultMs: number;
  catalog: readonly CatalogBusiness[];
  date: string;
}): PlannedSale[] {
  const { seed, sales, faultMs, catalog, date } = options;
  const dice = new Dice(deriveSeed(seed, 'sales'));
  const run = (seed >>> 0).toString(36).toUpperCase();
  const refunded = new Set(
    dice.shuffle(Array.from({ length: sales }, (_, i) => i)).slice(0, Math.round(sales * REFUNDED_SHARE)),
  );
  const spread = faultMs * START_SPREAD;
  const planned: PlannedSale[] = [];
  for (let index = 0; index < sales; index++) {
    const business = dice.pick(catalog);
    const roll = dice.roll();
    const path: SalePath = roll < ASYNC_SHARE ? 'async' : roll < ASYNC_SHARE + FLAKY_SHARE ? 'flaky' : 'immediate';
    const lineCount = dice.int(1, 3);
    const lines = Array.from({ length: lineCount }, () => {
      const item = dice.pick(business.items);
      return { itemId: item.itemId, quantity: dice.int(1, 3), unitPrice: item.unitPrice };
    });
    const branchId = dice.pick(business.branchIds);
    const traderInvoiceNumber = `${PREFIX[path]}CHAOS-${run}-${index}`;
    let refund: PlannedRefund | null = null;
    if (refunded.has(index)) {
      const reason = dice.pick(CREDIT_NOTE_REASONS);
      const restock = dice.chance(0.7);
      refund = {
        reason,
        restock,
        restocking: restock && !NON_RESTOCKING_REASONS.includes(reason),
        traderInvoiceNumber: `CN-${run}-${index}`,
      };
    }
    planned.push({
      index,
      path,
      // Evenly spread with a little seeded jitter: a steady till, not one burst.
      startAtMs: Math.round(((index + dice.roll()) / sales) * spread),
      input: {
        businessId: business.businessId,
        branchId,
        traderInvoiceNumber,
        saleDate: date,
        lines,
        options: { refundWindowDays: refund ? REFUND_WINDOW_DAYS : 0 },
      },
      refund,
    });
  }
  return planned;
}
