import { setCurrentDetails } from '@temporalio/workflow';
import type {
  ReconcileBusinessResult,
  ReconciliationCounts,
  ReconciliationInput,
} from '../../src/contracts/reconciliation.js';
import type { METRICS } from '../../src/metrics/catalogue.js';
import { count, setGauge } from '../metrics.js';

type FindingKind = (typeof METRICS)['etims_reconciliation_findings']['labels']['kind'][number];

/** Each count of a result as the findings gauge's kind: a count added to the result fails to compile until named. */
const FINDING_KINDS: Record<keyof ReconciliationCounts, FindingKind> = {
  purchases: 'purchases',
  billPayments: 'bill_payments',
  matched: 'matched',
  suggested: 'suggested',
  amountMismatches: 'amount_mismatches',
  unpaidPurchases: 'unpaid_purchases',
  unmatchedPayments: 'unmatched_payments',
  rejectedPurchases: 'rejected_purchases',
  ties: 'ties',
};

/** A reconciliation that ended failed; its input may be what it refused, so the business is read with care. */
export function countFailedReconciliation(input: unknown): void {
  const businessId =
    typeof input === 'object' && input !== null && 'businessId' in input && typeof input.businessId === 'string'
      ? input.businessId
      : '';
  count('etims_reconciliations', { business_id: businessId, outcome: 'failed' });
}

/** What a reconciliation shows the outside: its current details in the Temporal UI and its metrics. */
export class ReconciliationRecord {
  constructor(private readonly input: ReconciliationInput) {
    setCurrentDetails(`Reconciling \`${input.businessId}\` with \`${input.companyId}\`…`);
  }

  finished(summary: ReconcileBusinessResult['summary']): ReconcileBusinessResult {
    const { businessId, companyId } = this.input;
    const result: ReconcileBusinessResult = {
      businessId,
      companyId,
      summary,
      counts: summary.counts,
    };
    setCurrentDetails(summaryMarkdown(result));
    // Counted once; the findings gauges hold these counts until the business's next reconciliation succeeds.
    const business = { business_id: businessId };
    count('etims_reconciliations', { ...business, outcome: 'succeeded' });
    // The workflow's clock: the same on a replay.
    setGauge('etims_reconciliation_last_success_timestamp_seconds', Date.now() / 1000, business);
    for (const [name, kind] of Object.entries(FINDING_KINDS) as Array<[keyof ReconciliationCounts, FindingKind]>) {
      setGauge('etims_reconciliation_findings', summary.counts[name], { ...business, kind });
    }
    return result;
  }
}

/** Markdown for the Temporal UI's "current details": counts per category, nothing about any supplier. */
function summaryMarkdown(result: ReconcileBusinessResult): string {
  const c = result.counts;
  const rows: Array<[string, number]> = [
    ['Matched', c.matched],
    ['Suggested (confirm by hand)', c.suggested],
    ['Amount mismatches', c.amountMismatches],
    ['Unpaid invoices', c.unpaidPurchases],
    ['Payments without an invoice', c.unmatchedPayments],
    ['Rejected invoices (not owed)', c.rejectedPurchases],
    ['Ties to review', c.ties],
  ];
  return [
    `**Reconciliation** of \`${result.businessId}\` with \`${result.companyId}\` as of ${result.summary.asOf}`,
    '',
    '| Category | Count |',
    '|---|---:|',
    ...rows.map(([name, count]) => `| ${name} | ${count} |`),
    '',
    `${c.purchases} invoices, ${c.billPayments} bill payments.`,
  ].join('\n');
}
