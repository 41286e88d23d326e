import type {
  AccountingApplication,
  AccountingFixture,
  FixtureBillPayment,
  FixtureSyncBatch,
  SyncStatus,
} from './fixture.js';

export interface SyncBatchRecord extends FixtureSyncBatch {
  startedAt?: string;
  finishedAt?: string;
  /** Processing runs started so far (the first, then one per re-process of a failed batch). */
  runs: number;
}

/** A bill payment as the sandbox holds it: the fixture's record plus what sync processing adds (A18, A19). */
export interface BillPaymentRecord extends FixtureBillPayment {
  syncBatchId?: string;
  syncError?: string;
}

export type StartProcessingResult = 'started' | 'reprocessing' | 'already_processing' | 'already_processed';

/** One bill payment's sync status change, as the webhook dispatcher is told of it. */
export interface PaymentStatusChange {
  applicationId: string;
  companyId: string;
  syncBatchId: string;
  billPaymentId: string;
  previousStatus: SyncStatus;
  status: SyncStatus;
  reason?: string;
}

/**
 * The accounting sandbox's live data: a copy of the fixture that sync processing changes, restored by
 * `reset()`. Processing timers are tracked so closing or resetting the sandbox leaves nothing running.
 */
export class AccountingState {
  private readonly applicationsByKey = new Map<string, AccountingApplication>();
  private readonly ownerOfCompany = new Map<string, string>();
  private billPayments = new Map<string, BillPaymentRecord>();
  private syncBatches = new Map<string, SyncBatchRecord>();
  /** Per batch and bill payment: processing runs still to fail, with the reason (fixture `failures`). */
  private failuresLeft = new Map<string, Map<string, { reason: string; left: number }>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listeners: Array<(change: PaymentStatusChange) => void> = [];

  constructor(
    private readonly fixture: AccountingFixture,
    private readonly now: () => number,
  ) {
    for (const application of fixture.applications) {
      for (const key of application.apiKeys) this.applicationsByKey.set(key, application);
      for (const company of application.companies) this.ownerOfCompany.set(company.id, application.id);
    }
    this.reset();
  }

  get signQuery(): boolean {
    return this.fixture.signQuery;
  }

  applicationForKey(apiKey: string): AccountingApplication | undefined {
    return this.applicationsByKey.get(apiKey);
  }

  ownsCompany(applicationId: string, companyId: string): boolean {
    return this.ownerOfCompany.get(companyId) === applicationId;
  }

  /** Told of every bill payment status change made by processing (the webhook dispatcher listens). */
  onPaymentStatusChange(listener: (change: PaymentStatusChange) => void): void {
    this.listeners.push(listener);
  }

  /** Bill payments of an application's companies, in fixture order. */
  billPaymentsOf(applicationId: string): BillPaymentRecord[] {
    return [...this.billPayments.values()].filter((b) => this.ownerOfCompany.get(b.companyId) === applicationId);
  }

  allBillPayments(): BillPaymentRecord[] {
    return [...this.billPayments.values()];
  }

  syncBatch(id: string): SyncBatchRecord | undefined {
    return this.syncBatches.get(id);
  }

  allSyncBatches(): SyncBatchRecord[] {
    return [...this.syncBatches.values()];
  }

  ownerOf(batch: SyncBatchRecord): string | undefined {
    return this.ownerOfCompany.get(batch.companyId);
  }

  /**
   * A10/A21: a pending batch starts processing (its bill payments `syncing` at once) and ends after its
   * `processingDelayMs` (else the fixture's): each bill payment `synced`, or `failed` with a reason (the batch's
   * `outcome: failed`, or a fixture `failures` entry with runs left); the batch `failed` if any of its payments did,
   * else `completed`. A failed batch is processed again the same way, for its failed payments only. A batch that
   * is processing or completed is left as it is, so the call is safe to repeat.
   */
  startProcessing(batch: SyncBatchRecord): StartProcessingResult {
    if (batch.status === 'processing') return 'already_processing';
    if (batch.status === 'completed') return 'already_processed';
    const again = batch.status === 'failed';
    const targets = batch.billPaymentIds.filter((id) => !again || this.billPayments.get(id)?.status === 'failed');
    batch.status = 'processing';
    batch.runs += 1;
    batch.startedAt = this.isoNow();
    delete batch.finishedAt;
    for (const id of targets) this.setPaymentStatus(batch, id, 'syncing');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      for (const id of targets) {
        const reason = this.failureOf(batch, id);
        this.setPaymentStatus(batch, id, reason === undefined ? 'synced' : 'failed', reason);
      }
      const failed = batch.billPaymentIds.some((id) => this.billPayments.get(id)?.status === 'failed');
      batch.status = failed ? 'failed' : 'completed';
      batch.finishedAt = this.isoNow();
    }, batch.processingDelayMs ?? this.fixture.processingDelayMs);
    this.timers.add(timer);
    return again ? 'reprocessing' : 'started';
  }

  reset(): void {
    this.stopTimers();
    this.billPayments = new Map(this.fixture.billPayments.map((b) => [b.id, structuredClone(b)]));
    this.syncBatches = new Map(this.fixture.syncBatches.map((s) => [s.id, { ...structuredClone(s), runs: 0 }]));
    this.failuresLeft = new Map(
      this.fixture.syncBatches.map((s) => [
        s.id,
        new Map(s.failures.map((f) => [f.billPaymentId, { reason: f.reason, left: f.times }])),
      ]),
    );
    for (const batch of this.fixture.syncBatches) {
      for (const id of batch.billPaymentIds) {
        const payment = this.billPayments.get(id);
        if (payment) payment.syncBatchId = batch.id;
      }
    }
  }

  close(): void {
    this.stopTimers();
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** The reason this run fails the bill payment, or undefined when it syncs. */
  private failureOf(batch: SyncBatchRecord, billPaymentId: string): string | undefined {
    if (batch.outcome === 'failed') return batch.failureReason;
    const failure = this.failuresLeft.get(batch.id)?.get(billPaymentId);
    if (!failure || failure.left <= 0) return undefined;
    failure.left -= 1;
    return failure.reason;
  }

  private setPaymentStatus(batch: SyncBatchRecord, billPaymentId: string, status: SyncStatus, reason?: string): void {
    const payment = this.billPayments.get(billPaymentId);
    if (!payment) return;
    const previousStatus = payment.status;
    payment.status = status;
    payment.updatedAt = this.isoNow();
    if (reason === undefined) delete payment.syncError;
    else payment.syncError = reason;
    const applicationId = this.ownerOfCompany.get(batch.companyId);
    if (applicationId === undefined) return;
    const change: PaymentStatusChange = {
      applicationId,
      companyId: batch.companyId,
      syncBatchId: batch.id,
      billPaymentId,
      previousStatus,
      status,
      ...(reason === undefined ? {} : { reason }),
    };
    for (const listener of this.listeners) listener(change);
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }
}
