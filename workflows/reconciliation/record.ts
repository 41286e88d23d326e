import { setCurrentDetails } from '@temporalio/workflow';
import type { ReconcileBusinessResult, ReconciliationCalls, ReconciliationInput } from '../../src/contracts/reconciliation.js';

type Service = 'compliance' | 'accounting';

/**
 * What a reconciliation shows the outside: the API calls it made (in its result) and its current details in the
 * Temporal UI, the counts per category once it is done.
 */
export class ReconciliationRecord {
  readonly calls: ReconciliationCalls = { compliance: { listBusinesses: 0, listPurchases: 0 }, accounting: { listCompanies: 0, listBillPayments: 0 }, total: 0 };

  constructor(private readonly input: ReconciliationInput) {
    setCurrentDetails(`Reconciling \`${input.businessId}\` with \`${input.companyId}\`…`);
  }

  /** An activity's calls, counted for its operation and in the total. */
  counted<S extends Service>(service: S, operation: keyof ReconciliationCalls[S], apiCalls: number): void {
    (this.calls[service] as Record<keyof ReconciliationCalls[S], number>)[operation] += apiCalls;
    this.calls.total += apiCalls;
  }

  finished(summary: ReconcileBusinessResult['summary']): ReconcileBusinessResult {
    const { businessId, companyId } = this.input;
    const result: ReconcileBusinessResult = { businessId, companyId, summary, counts: summary.counts, calls: this.calls };
    setCurrentDetails(summaryMarkdown(result));
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
    `${c.purchases} invoices, ${c.billPayments} bill payments, ${result.calls.total} API calls.`,
  ].join('\n');
}
