import { condition, getExternalWorkflowHandle } from '@temporalio/workflow';
import { stockCarriedSignal, type LedgerMovement, type SaleNotice } from '../../src/contracts/stock-ledger.js';

/** Signals in flight at once: each is two history events, and the server buffers at most ~100 events per task. */
const IN_FLIGHT = 20;

/**
 * Tells sales that asked which movement carried their lines (`stockCarried`): one signal per sale however many lines,
 * a bounded number at a time; what is not sent yet is carried over continue-as-new.
 */
export class SaleNotices {
  private readonly queued = new Map<string, SaleNotice['lines']>();
  private inFlight = 0;
  private paused = false;

  constructor(
    private readonly ledgerWorkflowId: string,
    carried: readonly SaleNotice[] | undefined,
  ) {
    for (const notice of carried ?? []) this.queued.set(notice.saleWorkflowId, [...notice.lines]);
  }

  recorded(movements: readonly LedgerMovement[]): void {
    for (const m of movements) {
      const movement = {
        referenceId: m.referenceId,
        ...(m.movementId === undefined ? {} : { movementId: m.movementId }),
      };
      for (const { lineId, saleWorkflowId } of m.lines.filter((l) => l.tellSale))
        this.queued.set(saleWorkflowId, [...(this.queued.get(saleWorkflowId) ?? []), { lineId, ...movement }]);
    }
  }

  /** Sends for as long as the workflow runs; a sale closed meanwhile needs no telling. */
  async run(): Promise<never> {
    for (;;) {
      await condition(() => !this.paused && this.queued.size > 0 && this.inFlight < IN_FLIGHT);
      const [sale, lines] = this.queued.entries().next().value!;
      this.queued.delete(sale);
      this.inFlight++;
      void getExternalWorkflowHandle(sale)
        .signal(stockCarriedSignal, { ledgerWorkflowId: this.ledgerWorkflowId, lines })
        .catch(() => undefined)
        .finally(() => this.inFlight--);
    }
  }

  /** Stops sending and waits for what is in flight: what is queued goes to the next run. */
  async pause(): Promise<SaleNotice[]> {
    this.paused = true;
    await condition(() => this.inFlight === 0);
    return [...this.queued].map(([saleWorkflowId, lines]) => ({ saleWorkflowId, lines }));
  }

  get idle(): boolean {
    return this.queued.size === 0 && this.inFlight === 0;
  }
}
