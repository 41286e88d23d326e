/**
 * The scheduled reconciliation's one activity: load (src/reconciliation/load.ts), sort by the same rules as
 * `npm run reconcile` (src/reconciliation/rules.ts), return plain data. It runs on the compliance queue, whose
 * server-side rate limit is the fleet's compliance budget, at the lowest priority (workflows/reconciliation.ts).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AccountingClient } from '../src/accounting/client.js';
import type { ComplianceClient } from '../src/compliance/index.js';
import type { Logger } from '../src/logger.js';
import { ReconciliationInputError, loadReconciliationData, type ReconciliationCalls } from '../src/reconciliation/load.js';
import { calendarDay, reconcile, type ReconcileOptions, type ReconciliationCounts, type ReconciliationResult } from '../src/reconciliation/rules.js';
import { callApi } from './api-call.js';
import { FAILURE_TYPES } from './failures.js';

export interface ReconciliationActivityDeps {
  compliance: ComplianceClient;
  accounting: AccountingClient;
  logger: Logger;
}

export interface ReconcileBusinessInput {
  businessId: string;
  companyId: string;
  /** Day ages are counted to (default: today in Nairobi when the activity runs). */
  asOf?: string;
  options?: Partial<ReconcileOptions>;
}

export interface ReconcileBusinessResult {
  businessId: string;
  companyId: string;
  /** The JSON of `npm run reconcile -- --json`, less its call counts. */
  summary: ReconciliationResult;
  counts: ReconciliationCounts;
  /** API calls of the run's last attempt. */
  calls: ReconciliationCalls;
}

export function createReconciliationActivities(deps: ReconciliationActivityDeps) {
  return {
    /**
     * One attempt reads everything again: a reconciliation is a snapshot, so a retry after a 429 or a reset
     * starts over rather than mixing pages read at different times. Heartbeats every page.
     */
    async reconcileBusiness(input: ReconcileBusinessInput): Promise<ReconcileBusinessResult> {
      const context = Context.current();
      const { businessId, companyId } = input;
      const data = await callApi({ idempotent: true, logger: deps.logger }, async (signal) => {
        try {
          return await loadReconciliationData(deps, { businessId, companyId, signal, onPage: (progress) => context.heartbeat(progress) });
        } catch (err) {
          // A business or company the keys cannot see: configuration, which no retry fixes.
          if (err instanceof ReconciliationInputError) {
            throw ApplicationFailure.create({ type: FAILURE_TYPES.notConfigured, message: err.message, nonRetryable: true });
          }
          throw err;
        }
      });
      const summary = reconcile(data.purchases, data.billPayments, input.asOf ?? calendarDay(Date.now()), input.options);
      deps.logger.info({ businessId, companyId, counts: summary.counts, calls: data.calls.total }, 'reconciliation done');
      return { businessId, companyId, summary, counts: summary.counts, calls: data.calls };
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
