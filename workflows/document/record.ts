import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { fiscalDayAttribute, fiscalDayEntryOf } from '../../src/contracts/fiscal-day.js';
import type { InputProblem } from '../../src/contracts/sale-input.js';
import type {
  BusinessWait,
  FiscalDocument,
  OutageWait,
  ParkedAction,
  SaleState,
  SaleStep,
  SoldLine,
} from '../../src/contracts/sale.js';
import { CuInvoiceNumber, FiscalDay, FiscalStatus } from '../../src/contracts/search-attributes.js';
import { Attention } from '../attention.js';
import { count } from '../metrics.js';

const { businessNotServed } = FAILURE_TYPES;
/** Unserved past a day, a business needs a person: to onboard it, or to cancel its sales. */
const BUSINESS_ATTENTION_AFTER_MS = 24 * 3_600_000;

export const SIDE_NAMES = { service: 'compliance service', authority: 'tax authority' } as const;

type RecordSubject = Pick<SaleState, 'businessId' | 'traderInvoiceNumber'> & {
  branchId?: string | undefined;
  lines?: readonly SoldLine[];
};

export function initialSaleState({ businessId, traderInvoiceNumber, branchId, lines }: RecordSubject): SaleState {
  return {
    step: 'creating_sale',
    businessId,
    traderInvoiceNumber,
    ...(branchId ? { branchId } : {}),
    ...(lines?.length
      ? { lines: lines.map(({ itemId, quantity, unitPrice }) => ({ itemId, quantity, unitPrice })) }
      : {}),
    sale: null,
    creditNote: null,
    parked: null,
    outage: null,
    stockMovements: [],
    submissions: 0,
    signedAt: null,
    refundDeadline: null,
    history: [],
  };
}

/** A sale's or a refund's state (the `getState` query), search attributes and UI details: every change goes here. */
export class SaleRecord {
  readonly state: SaleState;
  private readonly attention = new Attention();
  /** `FiscalStatus` as last written by the document's reads, put back once an outage is over. */
  private documentStatus: string | undefined = workflowInfo().typedSearchAttributes.get(FiscalStatus);
  private stepBeforeOutage: SaleStep = 'creating_sale';
  /** The latest Temporal cancellation refused, shown in the current details so an operator sees why. */
  private refusedCancellation: string | undefined;

  constructor(
    subject: RecordSubject,
    private readonly kind: 'sale' | 'refund' = 'sale',
  ) {
    this.state = initialSaleState(subject);
  }

  /** A signed sale is reversed by a refund; completed without receipt values, it is on the authority's books too. */
  get cancellable(): boolean {
    return this.kind === 'sale' && this.state.sale?.status !== 'completed';
  }

  note(event: string): void {
    this.state.history.push({ at: new Date().toISOString(), event });
  }

  enter(step: SaleStep): void {
    this.state.step = step;
    this.changed();
  }

  /** The latest read of the sale or the refund's credit note: only the sale's status is a search attribute. */
  show(document: FiscalDocument): void {
    if (this.kind === 'refund') {
      this.state.creditNote = document;
      return;
    }
    this.state.sale = document;
    // A signed sale is written as such by signed(), right after.
    if (!isSigned(document)) {
      this.documentStatus = document.status;
      // While an outage is waited out, `awaiting_…` stands: every try would otherwise write it back and forth.
      if (!this.state.outage) writeStatus(document.status);
    }
    this.changed();
  }

  signed(sale: FiscalDocument, refundWindowMs: number): void {
    this.state.sale = sale;
    this.state.signedAt = new Date().toISOString();
    this.state.refundDeadline = new Date(Date.now() + refundWindowMs).toISOString();
    writeStatus('signed', { key: CuInvoiceNumber, value: sale.receipt?.cuInvoiceNo ?? '' }, ...this.fiscalDay(sale));
    count('etims_sales_signed', {});
    this.changed(`signed as ${sale.receipt?.cuInvoiceNo ?? '?'}`);
  }

  refunded(creditNote: FiscalDocument): void {
    this.state.creditNote = creditNote;
    writeStatus('refunded', ...this.fiscalDay(creditNote));
    count('etims_credit_notes_signed', {});
    this.changed(`credit note signed as ${creditNote.receipt?.cuInvoiceNo ?? '?'}`);
  }

  park(code: string, message: string, actions: ParkedAction[], itemIds?: string[]): void {
    this.state.parked = { code, message, since: new Date().toISOString(), actions, ...(itemIds ? { itemIds } : {}) };
    this.state.step = 'parked';
    count('etims_sales_parked', { code });
    this.attention.write(true, code);
    this.changed(`parked: ${code}`);
  }

  /** Written when the side or the cause changes, not on every try. */
  waitingOut(seen: Pick<OutageWait, 'side' | 'cause' | 'message'>): OutageWait {
    const before = this.state.outage ?? null;
    const outage = { ...seen, since: before?.since ?? new Date().toISOString(), attempts: (before?.attempts ?? 0) + 1 };
    this.state.outage = outage;
    if (this.state.step !== 'waiting_out_outage') this.stepBeforeOutage = this.state.step;
    this.state.step = 'waiting_out_outage';
    if (before?.side !== seen.side || before.cause !== seen.cause) {
      this.note(`waiting out ${seen.side} outage: ${seen.cause}`);
      writeStatus(`awaiting_${seen.side}`);
      this.attention.write(false, seen.cause);
      count('etims_sales_outage_waits', { side: seen.side });
    }
    this.changed();
    return outage;
  }

  /** The outage, if there was one (of that `side`), is over for this process: it answered, or it parks. */
  outageOver(side?: OutageWait['side'], how: 'answered' | 'parking' = 'answered'): void {
    const outage = this.state.outage;
    if (!outage || (side !== undefined && outage.side !== side)) return;
    this.state.outage = null;
    if (this.state.step === 'waiting_out_outage') this.state.step = this.stepBeforeOutage;
    const tries = `${outage.attempts} ${outage.attempts === 1 ? 'try' : 'tries'}`;
    this.note(how === 'answered' ? `${outage.side} answered after ${tries}` : `stopped waiting after ${tries}`);
    writeStatus(this.documentStatus ?? '');
    this.refreshAttention();
  }

  /** Counted once; needing a person (to onboard the business, or cancel) only after a day. */
  awaitingBusiness(message: string): BusinessWait {
    const before = this.state.awaitingBusiness ?? null;
    const wait = { message, since: before?.since ?? new Date().toISOString(), attempts: (before?.attempts ?? 0) + 1 };
    this.state.awaitingBusiness = wait;
    this.state.step = 'awaiting_business';
    if (!before) {
      this.note(`waiting for an application to serve business ${this.state.businessId}`);
      count('etims_sales_business_waits', {});
    }
    this.attention.write(Date.now() - Date.parse(wait.since) >= BUSINESS_ATTENTION_AFTER_MS, businessNotServed);
    this.changed();
    return wait;
  }

  businessServed(): void {
    const wait = this.state.awaitingBusiness;
    if (!wait) return;
    this.state.awaitingBusiness = null;
    this.note(`business served after ${wait.attempts} refused placement${wait.attempts === 1 ? '' : 's'}`);
    this.refreshAttention();
  }

  unpark(): void {
    if (!this.state.parked) return;
    this.state.parked = null;
    this.refreshAttention();
  }

  isParkedFor(action: ParkedAction): boolean {
    return this.state.parked?.actions.includes(action) ?? false;
  }

  /** `problems`: of an input the sale cannot use. */
  failed(type: string, problems?: readonly InputProblem[]): void {
    this.state.step = 'failed';
    writeStatus(problems ? 'invalid_input' : 'failed', ...this.attention.pairs(true, type));
    count('etims_sales_failed', { reason: type });
    this.changed(problems && `invalid input: ${problems.map((p) => `${p.field} ${p.reason}`).join('; ')}`);
  }

  /** The caller was told: nobody needs to act. */
  refused(reason: string): void {
    this.state.step = 'failed';
    writeStatus('refused', ...this.attention.pairs(false, ''));
    this.changed(`refused: ${reason}`);
  }

  cancellationRefused(why: string): void {
    this.refusedCancellation = `${new Date().toISOString()}: ${why}`;
    this.changed(`cancellation refused: ${why}`);
  }

  cancelled(reason: string): void {
    this.state.step = 'cancelled';
    this.state.parked = null;
    if (this.state.awaitingBusiness) this.state.awaitingBusiness = null;
    writeStatus('cancelled', ...this.attention.pairs(false, ''));
    count('etims_sales_cancelled', {});
    this.changed(`cancelled: ${reason}`);
  }

  reverses(found: Pick<SaleState, 'sale' | 'lines' | 'signedAt' | 'refundDeadline' | 'branchId'>): void {
    Object.assign(this.state, found);
    this.changed(`reverses sale ${found.sale!.id} signed as ${found.sale!.receipt?.cuInvoiceNo ?? '?'}`);
  }

  closed(): void {
    this.state.step = 'completed';
    this.changed(this.kind === 'refund' ? 'refunded; closed' : 'signed and its stock handed over; closed');
  }

  /** A person is needed only while parked; the reason shows an outage or an unserved business too. */
  private refreshAttention(): void {
    const { parked, outage, awaitingBusiness } = this.state;
    this.attention.write(parked !== null, parked?.code ?? outage?.cause ?? (awaitingBusiness ? businessNotServed : ''));
    this.changed();
  }

  /** Shows the state in the current details: no customer data. */
  private changed(event?: string): void {
    if (event) this.note(event);
    const { step, sale, creditNote, parked, outage, awaitingBusiness: waiting } = this.state;
    const lines = [`**Step:** ${step}`];
    const shown = (label: string, { id, status, receipt }: FiscalDocument) =>
      `**${label}:** ${id} · ${status}${receipt?.cuInvoiceNo ? ` · ${receipt.cuInvoiceNo}` : ''}`;
    if (sale) lines.push(shown('Sale', sale));
    if (creditNote) lines.push(shown('Credit note', creditNote));
    if (parked)
      lines.push(
        `**Parked:** \`${parked.code}\` since ${parked.since}: ${parked.message}`,
        `**Resolve with the update:** ${parked.actions.map((a) => `\`${a}\``).join(' or ')}` +
          (parked.itemIds ? ` (items ${parked.itemIds.join(', ')})` : ''),
      );
    if (outage && !parked)
      lines.push(
        `**Waiting out an outage** of the ${SIDE_NAMES[outage.side]} since ${outage.since}: \`${outage.cause}\` ` +
          `${outage.message} (${outage.attempts} tries). ` +
          'The sale goes on by itself once it answers: nobody needs to act.',
      );
    if (waiting)
      lines.push(
        `**Waiting for business ${this.state.businessId} to be served** since ${waiting.since} ` +
          `(${waiting.attempts} tries): ${waiting.message}. Nothing is sent meanwhile; the sale goes on by itself ` +
          'once a tenants reload serves the business, or the `cancel` update ends it.',
      );
    if (this.refusedCancellation) lines.push(`**Cancellation refused** ${this.refusedCancellation}`);
    setCurrentDetails(lines.join('\n\n'));
  }

  /** The day the authority signed the document on: its day book's. */
  private fiscalDay(document: FiscalDocument): SearchAttributeUpdatePair[] {
    const day = fiscalDayEntryOf(this.state.businessId, document, Date.now());
    return day ? [{ key: FiscalDay, value: fiscalDayAttribute(day) }] : [];
  }
}

function writeStatus(status: string, ...others: SearchAttributeUpdatePair[]): void {
  upsertSearchAttributes([{ key: FiscalStatus, value: status }, ...others]);
}
