import { upsertSearchAttributes } from '@temporalio/workflow';
import {
  CuInvoiceNumber,
  FiscalStatus,
  NeedsAttention,
  type FiscalDocument,
  type ParkedAction,
  type SaleInput,
  type SaleState,
  type SaleStep,
  type StockMovementState,
} from '../definitions.js';

/** A sale's state before anything happened, as the `getState` query shows it. */
export function initialSaleState(input: Pick<SaleInput, 'businessId' | 'traderInvoiceNumber'>, step: SaleStep): SaleState {
  return {
    step,
    businessId: input.businessId,
    traderInvoiceNumber: input.traderInvoiceNumber,
    sale: null,
    creditNote: null,
    parked: null,
    stockMovements: [],
    apiCalls: 0,
    submissions: 0,
    refundDeadline: null,
    history: [],
  };
}

/**
 * What a sale shows the outside: its state (the `getState` query) and its search attributes in the Temporal
 * UI. Every change of step, park and fiscal status goes through here, so the two never disagree.
 */
export class SaleRecord {
  readonly state: SaleState;

  constructor(input: SaleInput) {
    this.state = initialSaleState(input, 'registering_items');
  }

  note(event: string): void {
    this.state.history.push({ at: new Date().toISOString(), event });
  }

  countCalls(calls: number): void {
    this.state.apiCalls += calls;
  }

  enter(step: SaleStep): void {
    this.state.step = step;
  }

  /** The latest read of the sale or its credit note; only the sale's status is a search attribute. */
  show(kind: 'sale' | 'credit note', document: FiscalDocument): void {
    if (kind === 'credit note') {
      this.state.creditNote = document;
      return;
    }
    this.state.sale = document;
    upsertSearchAttributes([{ key: FiscalStatus, value: document.status }]);
  }

  signed(sale: FiscalDocument): void {
    this.state.sale = sale;
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'signed' },
      { key: CuInvoiceNumber, value: sale.receipt?.cuInvoiceNo ?? '' },
    ]);
    this.note(`signed as ${sale.receipt?.cuInvoiceNo ?? '?'}`);
  }

  refunded(creditNote: FiscalDocument): void {
    this.state.creditNote = creditNote;
    upsertSearchAttributes([{ key: FiscalStatus, value: 'refunded' }]);
    this.note(`credit note signed as ${creditNote.receipt?.cuInvoiceNo ?? '?'}`);
  }

  park(code: string, message: string, actions: ParkedAction[], itemIds?: string[]): void {
    this.state.parked = { code, message, since: new Date().toISOString(), actions, ...(itemIds ? { itemIds } : {}) };
    this.state.step = 'parked';
    this.note(`parked: ${code}`);
    upsertSearchAttributes([{ key: NeedsAttention, value: true }]);
  }

  unpark(): void {
    if (!this.state.parked) return;
    this.state.parked = null;
    this.refreshAttention();
  }

  isParkedFor(action: ParkedAction): boolean {
    return this.state.parked?.actions.includes(action) ?? false;
  }

  /** `NeedsAttention` while the sale is parked or a stock movement waits for an operator. */
  refreshAttention(): void {
    const attention = this.state.parked !== null || this.state.stockMovements.some((m) => m.status === 'needs_confirmation');
    upsertSearchAttributes([{ key: NeedsAttention, value: attention }]);
  }

  failed(): void {
    this.state.step = 'failed';
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'failed' },
      { key: NeedsAttention, value: true },
    ]);
  }

  cancelled(reason: string): void {
    this.state.step = 'cancelled';
    this.state.parked = null;
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'cancelled' },
      { key: NeedsAttention, value: false },
    ]);
    this.note(`cancelled: ${reason}`);
  }

  closed(): void {
    this.state.step = 'completed';
    this.note(this.state.creditNote ? 'refunded; closed' : 'refund window ended; closed');
  }

  movement(referenceId: string): StockMovementState | undefined {
    return this.state.stockMovements.find((m) => m.referenceId === referenceId);
  }
}
