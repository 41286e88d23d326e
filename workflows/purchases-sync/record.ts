import { setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type {
  ListPurchasesPageResult,
  PurchasesSyncCarry,
  PurchasesSyncProgress,
  PurchasesSyncResult,
} from '../../src/contracts/purchases-sync.js';
import { count, setGauge } from '../metrics.js';
import { diffPage, previousLedger, recordDelivered, type DueEvent } from './ledger.js';

function freshCarry(businessId: string): PurchasesSyncCarry {
  return {
    pulled: false,
    cursor: null,
    // Schedules hand the previous completion's result to the next action: the ledger needs no store of its own.
    previous: previousLedger(workflowInfo().lastResult, businessId),
    ledger: {},
    counts: { pages: 0, seen: 0, newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 },
    sinkDown: false,
    runs: 1,
  };
}

/** Its progress query, UI details and metrics; its state is what a run carries to the next. */
export class PurchasesSyncRecord {
  readonly state: PurchasesSyncCarry;

  constructor(
    private readonly businessId: string,
    carry: PurchasesSyncCarry | undefined,
  ) {
    this.state = carry ?? freshCarry(businessId);
  }

  progress(): PurchasesSyncProgress {
    const { counts, cursor, sinkDown, runs } = this.state;
    return { businessId: this.businessId, counts, cursor, sinkDown, runs };
  }

  pulled(): void {
    this.state.pulled = true;
  }

  /** A listed page, compared with what was delivered: the events it makes due. */
  compared(page: ListPurchasesPageResult): DueEvent[] {
    const { counts } = this.state;
    counts.pages++;
    const diff = diffPage(this.businessId, page.purchases, this.state.previous, this.state.ledger);
    counts.seen += diff.seen;
    counts.newInvoices += diff.newInvoices;
    counts.statusChanges += diff.statusChanges;
    return diff.due;
  }

  /** The first `delivered` of the due events reached the sink; the rest wait for the next sync. */
  delivered(due: readonly DueEvent[], delivered: number): void {
    recordDelivered(this.state.ledger, due, delivered);
    this.state.counts.delivered += delivered;
    this.state.counts.pending += due.length - delivered;
    if (delivered > 0) count('etims_purchase_events_delivered', { business_id: this.businessId }, delivered);
  }

  /** Counted once a sync: once down, the sink is not called again until the next sync (the flag is carried). */
  sinkWentDown(): void {
    if (this.state.sinkDown) return;
    this.state.sinkDown = true;
    count('etims_purchases_sink_failures', { business_id: this.businessId });
  }

  /** The page is done: the listing goes on from `cursor` (null: it is complete). */
  advanced(cursor: string | null): void {
    this.state.cursor = cursor;
    this.show(cursor === null ? 'done' : `listing (page ${this.state.counts.pages + 1} next)`);
  }

  nextRun(): PurchasesSyncCarry {
    return { ...this.state, runs: this.state.runs + 1 };
  }

  /** The sync's end, in its last run (earlier runs continue as new): its result, the schedule's next hand-over. */
  finished(): PurchasesSyncResult {
    const business = { business_id: this.businessId };
    count('etims_purchases_syncs', { ...business, outcome: 'succeeded' });
    // The workflow's clock: the same on a replay, and no later than the sync really ended.
    setGauge('etims_purchases_sync_last_success_timestamp_seconds', Date.now() / 1000, business);
    setGauge('etims_purchase_events_pending', this.state.counts.pending, business);
    return { businessId: this.businessId, ledger: this.state.ledger, counts: this.state.counts };
  }

  show(phase: string): void {
    const { counts, sinkDown } = this.state;
    setCurrentDetails(
      [
        `**Purchases sync** of \`${this.businessId}\`: ${phase}`,
        '',
        '| pages | invoices seen | new | status changes | delivered | pending |',
        '|---|---|---|---|---|---|',
        `| ${counts.pages} | ${counts.seen} | ${counts.newInvoices} | ` +
          `${counts.statusChanges} | ${counts.delivered} | ${counts.pending} |`,
        ...(sinkDown ? ['', 'The sink did not take events: they wait for the next sync.'] : []),
      ].join('\n'),
    );
  }
}
