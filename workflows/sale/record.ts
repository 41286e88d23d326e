import { metricMeter, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import { METRICS } from '../../src/temporal/metric-names.js';
import { CuInvoiceNumber, FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { type FiscalDocument, type ParkedAction, type SaleInput, type SaleState, type SaleStep, type StockMovementState } from '../../src/contracts/sale.js';

/** Counted once per execution: the SDK emits no workflow metric while replaying. */
function count(name: string, attributes: Record<string, string> = {}): void {
  metricMeter.createCounter(name).add(1, attributes);
}

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
  /** The last `NeedsAttention` written (undefined: not known), so the lean path writes only changes. */
  private attention: boolean | undefined;

  /** `lean`: started on 0.4 or later (patches.ts); it writes fewer search attributes and starts by filing. */
  constructor(
    input: SaleInput,
    private readonly lean = false,
  ) {
    this.state = initialSaleState(input, lean ? 'creating_sale' : 'registering_items');
    this.attention = workflowInfo().typedSearchAttributes.get(NeedsAttention);
  }

  note(event: string): void {
    this.state.history.push({ at: new Date().toISOString(), event });
  }

  countCalls(calls: number): void {
    this.state.apiCalls += calls;
  }

  enter(step: SaleStep): void {
    this.state.step = step;
    this.publishDetails();
  }

  /** The latest read of the sale or its credit note; only the sale's status is a search attribute. */
  show(kind: 'sale' | 'credit note', document: FiscalDocument): void {
    if (kind === 'credit note') {
      this.state.creditNote = document;
      return;
    }
    this.state.sale = document;
    // A signed sale is written as such by signed(), right after.
    if (!(this.lean && isSigned(document))) upsertSearchAttributes([{ key: FiscalStatus, value: document.status }]);
    this.publishDetails();
  }

  signed(sale: FiscalDocument): void {
    this.state.sale = sale;
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'signed' },
      { key: CuInvoiceNumber, value: sale.receipt?.cuInvoiceNo ?? '' },
    ]);
    this.note(`signed as ${sale.receipt?.cuInvoiceNo ?? '?'}`);
    count(METRICS.salesSigned);
    this.publishDetails();
  }

  refunded(creditNote: FiscalDocument): void {
    this.state.creditNote = creditNote;
    upsertSearchAttributes([{ key: FiscalStatus, value: 'refunded' }]);
    this.note(`credit note signed as ${creditNote.receipt?.cuInvoiceNo ?? '?'}`);
    count(METRICS.creditNotesSigned);
    this.publishDetails();
  }

  park(code: string, message: string, actions: ParkedAction[], itemIds?: string[]): void {
    this.state.parked = { code, message, since: new Date().toISOString(), actions, ...(itemIds ? { itemIds } : {}) };
    this.state.step = 'parked';
    this.note(`parked: ${code}`);
    count(METRICS.salesParked, { code });
    this.writeAttention(true);
    this.publishDetails();
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
    this.writeAttention(attention);
    this.publishDetails();
  }

  private writeAttention(attention: boolean): void {
    if (this.lean && attention === this.attention) return;
    upsertSearchAttributes([{ key: NeedsAttention, value: attention }]);
    this.attention = attention;
  }

  failed(): void {
    this.state.step = 'failed';
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'failed' },
      { key: NeedsAttention, value: true },
    ]);
    this.attention = true;
    count(METRICS.salesFailed);
    this.publishDetails();
  }

  cancelled(reason: string): void {
    this.state.step = 'cancelled';
    this.state.parked = null;
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'cancelled' },
      { key: NeedsAttention, value: false },
    ]);
    this.attention = false;
    this.note(`cancelled: ${reason}`);
    count(METRICS.salesCancelled);
    this.publishDetails();
  }

  closed(): void {
    this.state.step = 'completed';
    this.note(this.state.creditNote ? 'refunded; closed' : 'refund window ended; closed');
    this.publishDetails();
  }

  /**
   * The workflow's current details in the Temporal UI: the step, the fiscal documents and, when an operator is
   * needed, why and which updates resolve it, so nobody has to run a query to find out. No customer data.
   */
  private publishDetails(): void {
    const { step, sale, creditNote, parked, stockMovements } = this.state;
    const lines = [`**Step:** ${step}`];
    if (sale) lines.push(`**Sale:** ${sale.id} · ${sale.status}${sale.receipt?.cuInvoiceNo ? ` · ${sale.receipt.cuInvoiceNo}` : ''}`);
    if (creditNote) lines.push(`**Credit note:** ${creditNote.id} · ${creditNote.status}${creditNote.receipt?.cuInvoiceNo ? ` · ${creditNote.receipt.cuInvoiceNo}` : ''}`);
    if (parked) {
      lines.push(`**Parked:** \`${parked.code}\` since ${parked.since}: ${parked.message}`);
      lines.push(`**Resolve with the update:** ${parked.actions.map((a) => `\`${a}\``).join(' or ')}${parked.itemIds ? ` (items ${parked.itemIds.join(', ')})` : ''}`);
    }
    const waiting = stockMovements.filter((m) => m.status === 'needs_confirmation');
    if (waiting.length > 0) {
      lines.push(`**Stock movements needing an operator:** ${waiting.map((m) => `\`${m.referenceId}\` (${m.problem ?? 'unknown'})`).join('; ')}`);
      lines.push('**Resolve with the update:** `confirmStockMovement` or `resendStockMovement` with the reference');
    }
    setCurrentDetails(lines.join('\n\n'));
  }

  movement(referenceId: string): StockMovementState | undefined {
    return this.state.stockMovements.find((m) => m.referenceId === referenceId);
  }
}
