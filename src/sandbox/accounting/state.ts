import type { AccountingApplication, AccountingFixture, FixtureBillPayment, FixtureSyncBatch } from './fixture.js';

export interface SyncBatchRecord extends FixtureSyncBatch {
  startedAt?: string;
  finishedAt?: string;
}

export type StartProcessingResult = 'started' | 'already_processing' | 'already_processed';

/**
 * The accounting sandbox's live data: a copy of the fixture that sync processing changes, restored by
 * `reset()`. Processing timers are tracked so closing or resetting the sandbox leaves nothing running.
 */
export class AccountingState {
  private readonly applicationsByKey = new Map<string, AccountingApplication>();
  private readonly ownerOfCompany = new Map<string, string>();
  private billPayments = new Map<string, FixtureBillPayment>();
  private syncBatches = new Map<string, SyncBatchRecord>();
  private readonly timers = new Set<NodeJS.Timeout>();

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

  /** Bill payments of an application's companies, in fixture order. */
  billPaymentsOf(applicationId: string): FixtureBillPayment[] {
    return [...this.billPayments.values()].filter((b) => this.ownerOfCompany.get(b.companyId) === applicationId);
  }

  allBillPayments(): FixtureBillPayment[] {
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
   * A10: a pending batch starts processing (its bill payments `syncing` at once) and ends after
   * `processingDelayMs` as `completed` (payments `synced`) or `failed` (payments `failed`). Anything else
   * is left as it is, so the call is safe to repeat.
   */
  startProcessing(batch: SyncBatchRecord): StartProcessingResult {
    if (batch.status === 'processing') return 'already_processing';
    if (batch.status !== 'pending') return 'already_processed';
    batch.status = 'processing';
    batch.startedAt = this.isoNow();
    this.setPaymentStatus(batch, 'syncing');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const outcome = batch.outcome ?? 'synced';
      this.setPaymentStatus(batch, outcome);
      batch.status = outcome === 'synced' ? 'completed' : 'failed';
      batch.finishedAt = this.isoNow();
    }, this.fixture.processingDelayMs);
    this.timers.add(timer);
    return 'started';
  }

  reset(): void {
    this.stopTimers();
    this.billPayments = new Map(this.fixture.billPayments.map((b) => [b.id, structuredClone(b)]));
    this.syncBatches = new Map(this.fixture.syncBatches.map((s) => [s.id, structuredClone(s)]));
  }

  close(): void {
    this.stopTimers();
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private setPaymentStatus(batch: SyncBatchRecord, status: FixtureBillPayment['status']): void {
    const updatedAt = this.isoNow();
    for (const id of batch.billPaymentIds) {
      const payment = this.billPayments.get(id);
      if (!payment) continue;
      payment.status = status;
      payment.updatedAt = updatedAt;
    }
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }
}
