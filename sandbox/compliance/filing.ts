import { isInFlight } from './contract.js';
import type { Logger } from 'pino';
import type { Outage, OutageSchedule } from '../shared/outages.js';
import { causeFor, type SimulatedAuthority } from './authority.js';
import type { CallbackDispatcher } from './callbacks.js';
import { type AuthorityCause, type DocumentRecord, type DocumentStatus } from './model.js';
import { buildReceipt } from './receipts.js';
import type { ComplianceState } from './state.js';
import type { Timers } from './timers.js';

/**
 * A document's life with the simulated tax authority (C4–C7): submitted on creation and on retry, then
 * accepted (signed with a receipt), refused (`failed` with the causes), or left in flight and settled
 * later by a timer or by the inspection API. Every outcome is handed to the callback dispatcher. While an
 * authority outage lasts the authority is not asked at all: the submission fails at once, or is held in flight
 * until the outage ends and then fails, both with cause `authority_unavailable`.
 */
export class Filing {
  private readonly settlements = new Map<string, () => void>();
  /** Documents held in flight by an authority outage, by document id: the outage's id and the document. */
  private readonly held = new Map<string, { outageId: string; record: DocumentRecord }>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly options: {
      state: ComplianceState;
      authority: SimulatedAuthority;
      callbacks: CallbackDispatcher;
      timers: Timers;
      outages: OutageSchedule;
      now: () => number;
      logger: Logger | undefined;
    },
  ) {
    this.unsubscribe = options.outages.onEnd((outage) => this.release(outage));
  }

  /**
   * Sends the document to the authority. Resolves once the authority answered: after its latency for an
   * accept or a refusal, at once for an async outcome (the document stays `inFlightStatus`).
   */
  async submit(record: DocumentRecord, inFlightStatus: 'pending' | 'retrying'): Promise<void> {
    record.submissions += 1;
    if (record.view.status !== inFlightStatus) this.setStatus(record, inFlightStatus);
    const outage = this.options.outages.interceptSubmission();
    if (outage) {
      this.options.logger?.debug({ documentId: record.view.id, outageId: outage.id }, 'authority outage');
      if (outage.mode === 'in_flight') this.held.set(record.view.id, { outageId: outage.id, record });
      else this.fail(record, [unavailable(outage)]);
      return;
    }
    const { state } = this.options;
    const decision = this.options.authority.decide({
      documentId: record.view.id,
      documentType: record.view.type,
      businessId: record.view.businessId,
      traderInvoiceNumber: record.view.traderInvoiceNumber,
      customerPin: record.view.customer.pin,
      lines: record.view.lines.map((line) => ({
        itemId: line.itemId,
        registered: state.items.get(line.itemId)?.view.registrationStatus === 'REGISTERED',
      })),
    });
    this.options.logger?.debug(
      { documentId: record.view.id, outcome: decision.outcome, ruleId: decision.ruleId },
      'authority decision',
    );
    if (decision.outcome === 'async') {
      const cancel = this.options.timers.after(decision.delayMs, () => {
        this.settlements.delete(record.view.id);
        if (decision.settle === 'completed') this.complete(record);
        else this.fail(record, decision.causes);
      });
      this.settlements.set(record.view.id, cancel);
      return;
    }
    await this.options.timers.sleep(decision.delayMs);
    // Settled or cancelled through the inspection API while the authority was answering.
    if (record.view.status !== inFlightStatus) return;
    if (decision.outcome === 'accept') this.complete(record);
    else this.fail(record, decision.causes);
  }

  /** Settles an in-flight document now (inspection API). Returns false when it is not in flight. */
  settle(record: DocumentRecord, outcome: 'completed' | 'failed', causes: AuthorityCause[]): boolean {
    if (!isInFlight(record.view.status)) return false;
    this.cancelSettlement(record);
    if (outcome === 'completed') this.complete(record);
    else this.fail(record, causes);
    return true;
  }

  /** Cancels a document that is in flight or failed (C6, standing in for the dashboard). */
  cancel(record: DocumentRecord): boolean {
    if (!isInFlight(record.view.status) && record.view.status !== 'failed') return false;
    this.cancelSettlement(record);
    record.view.error = null;
    record.causes = [];
    this.setStatus(record, 'cancelled');
    return true;
  }

  /** Forgets pending settlements and held documents (the caller clears the timers). */
  reset(): void {
    this.settlements.clear();
    this.held.clear();
  }

  close(): void {
    this.unsubscribe();
  }

  private cancelSettlement(record: DocumentRecord): void {
    this.settlements.get(record.view.id)?.();
    this.settlements.delete(record.view.id);
    this.held.delete(record.view.id);
  }

  /** The outage ended: what it held never reached the authority, so it fails and must be resubmitted. */
  private release(outage: Outage): void {
    for (const [documentId, hold] of this.held) {
      if (hold.outageId !== outage.id) continue;
      this.held.delete(documentId);
      if (isInFlight(hold.record.view.status)) this.fail(hold.record, [unavailable(outage)]);
    }
  }

  private complete(record: DocumentRecord): void {
    const { state, now } = this.options;
    const view = record.view;
    const business = state.businesses.get(view.businessId);
    const branch = business?.branches.find((b) => b.id === view.branchId);
    if (!business || !branch) throw new Error(`document ${view.id} names an unknown business or branch`);
    const original = view.originalSaleId === null ? undefined : state.documents.get(view.originalSaleId);
    view.receipt = buildReceipt({
      documentType: view.type,
      businessPin: business.pin,
      authorityBhfId: branch.authorityBhfId,
      scuId: branch.scuId,
      ...state.nextReceiptCounters(business, branch),
      signedAt: new Date(now()),
      originalCuInvoiceNo: original?.view.receipt?.cuInvoiceNo ?? null,
    });
    view.error = null;
    record.causes = [];
    this.setStatus(record, 'completed');
    this.options.callbacks.outcome(record);
  }

  private fail(record: DocumentRecord, causes: AuthorityCause[]): void {
    record.causes = causes.map((cause) => ({ ...cause }));
    record.view.error = causes.map((cause) => cause.message).join('; ');
    this.setStatus(record, 'failed');
    this.options.callbacks.outcome(record);
  }

  private setStatus(record: DocumentRecord, status: DocumentStatus): void {
    const at = new Date(this.options.now()).toISOString();
    record.view.status = status;
    record.view.updatedAt = at;
    record.history.push({ at, status });
  }
}

function unavailable(outage: Outage): AuthorityCause {
  return causeFor('authority_unavailable', outage.message ?? undefined);
}
