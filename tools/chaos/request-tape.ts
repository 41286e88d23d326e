/**
 * Every compliance request the sandbox recorded during a run, kept whole. The sandbox keeps its latest 20,000
 * requests one by one (the inspection API's request log); a 1000-sale run can send more, so the run reads the
 * new ones every few seconds and appends them here. The sandbox runs in this process: its total count and its
 * records are read in one synchronous step, so exactly the requests recorded since the last read are taken, and
 * any that scrolled out of the log before being read are counted as missed, never silently dropped.
 */
import type { RequestRecord, RequestStats } from '../../sandbox/shared/request-stats.js';

export class RequestTape {
  private readonly kept: RequestRecord[] = [];
  private seen = 0;
  private missedCount = 0;

  constructor(private readonly stats: Pick<RequestStats, 'snapshot' | 'records'>) {}

  /** Appends the requests recorded since the last read (no await inside: nothing can be recorded meanwhile). */
  read(): void {
    const total = this.stats.snapshot().total;
    // The sandbox was reset: its count starts again.
    if (total < this.seen) this.seen = 0;
    const fresh = total - this.seen;
    if (fresh === 0) return;
    const log = this.stats.records();
    const taken = log.slice(Math.max(0, log.length - fresh));
    this.missedCount += fresh - taken.length;
    for (const record of taken) if (record.service === 'compliance') this.kept.push(record);
    this.seen = total;
  }

  /** The compliance requests read so far, in the order the sandbox answered them. */
  records(): readonly RequestRecord[] {
    return this.kept;
  }

  /** Requests (of either service) that left the sandbox's log before they were read. */
  missed(): number {
    return this.missedCount;
  }
}
