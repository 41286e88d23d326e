// `npm run sales -- resume-parked`: after an outage, every sale it parked resumed in one command. One retry update per
// sale rather than Temporal's batch operation: each sale's own answer is reported, the sales are read before anything
// is sent (a dry run), and a sale parked for another reason by now is left alone even when visibility still lists it.
import type { SalesClient } from '../client/sales-client.js';
import { DEFAULT_PARK_REASON, parkedSalesQuery, type ParkedSalesFilter } from '../client/sale-queries.js';
import { EXIT, UsageError, type CommandResult } from './client-command.js';

export interface ResumeParkedOptions {
  business?: string;
  application?: string;
  reason?: string;
  yes?: boolean;
}

/** Sales whose state is read or retried at once: enough to be quick, few enough to spare the workers. */
const CONCURRENCY = 10;

export const RESUME_PARKED_DESCRIPTION =
  `resume the sales of a business (--business) or an application (--application) parked with --reason ` +
  `(default ${DEFAULT_PARK_REASON}): lists them and sends nothing unless --yes, then retries each, ` +
  `${CONCURRENCY} at a time. Found through Temporal's visibility, which lags the sales by a few seconds: a sale ` +
  'parked just now may be missing (run it again), and each is read before its retry, so one that moved on is ' +
  'left alone';

/** The filter, checked (a value no query can match is refused) before anything is contacted. */
export function resumeParkedFilter(options: ResumeParkedOptions, taskQueue: string): ParkedSalesFilter {
  if (options.business === undefined && options.application === undefined)
    throw new UsageError('resume-parked needs --business <businessId> or --application <name> (or both)');
  const filter: ParkedSalesFilter = {
    ...(options.business === undefined ? {} : { businessId: options.business }),
    ...(options.application === undefined ? {} : { application: options.application }),
    reason: options.reason ?? DEFAULT_PARK_REASON,
  };
  parkedSalesQuery(taskQueue, filter);
  return filter;
}

/** The dry run lists; --yes resumes. Exit 0 unless a sale's retry failed (a refusal is counted, not a failure). */
export async function resumeParked(
  sales: SalesClient,
  filter: ParkedSalesFilter,
  yes: boolean,
): Promise<CommandResult> {
  const { query, sales: found } = await sales.findParkedSales(filter);
  const options = { reason: filter.reason ?? DEFAULT_PARK_REASON, concurrency: CONCURRENCY };
  if (!yes) {
    const listed = await sales.viewParkedSales(found, options);
    return {
      output: {
        dryRun: true,
        query,
        found: found.length,
        sales: listed,
        next: found.length === 0 ? 'nothing to resume' : 'nothing was sent: run it again with --yes to resume them',
      },
    };
  }
  const outcomes = await sales.resumeParkedSales(found, options);
  const count = (outcome: string) => outcomes.filter((o) => o.outcome === outcome).length;
  const failed = count('failed');
  return {
    output: {
      dryRun: false,
      query,
      found: found.length,
      resumed: count('resumed'),
      refused: count('refused'),
      failed,
      sales: outcomes,
    },
    code: failed === 0 ? EXIT.done : EXIT.failed,
  };
}
