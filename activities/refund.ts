/** What a refund reads of its sale: the sale's closed workflow holds the signed record (no service call). */
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import { isSigned } from '../src/contracts/compliance-rules.js';
import { getSaleStateQuery, saleWorkflowId, type SaleState } from '../src/contracts/sale.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';
import type { FindSignedSaleInput, FoundSale } from './types.js';

export function createRefundActivities(deps: Pick<ActivityDeps, 'temporal'>) {
  return {
    async findSignedSale({ businessId, traderInvoiceNumber }: FindSignedSaleInput): Promise<FoundSale> {
      const client = temporalClientOf(deps, 'findSignedSale');
      const handle = client.workflow.getHandle(saleWorkflowId(businessId, traderInvoiceNumber));
      let status: string;
      try {
        status = (await handle.describe()).status.name;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return { found: 'no_record' };
        throw err;
      }
      // A completed run's result is read without a worker; any other run's state is replayed by one.
      const state =
        status === 'COMPLETED' ? ((await handle.result()) as SaleState) : await handle.query(getSaleStateQuery);
      const signed = state.sale !== null && isSigned(state.sale);
      if (status === 'RUNNING' && signed) {
        // A sale holding a refund window of its own takes its refund itself (sales-client.ts `refundOpenSale`).
        if ((state.step as string) === 'refund_window')
          return {
            found: 'refused',
            reason: 'the sale is still open for its refund: send the refund update to the sale workflow itself',
            openForRefund: true,
          };
        // Signed, its stock being handed over: it closes in moments.
        throw ApplicationFailure.retryable('the sale is signed and closing', 'sale_closing');
      }
      // Filed and on its way (the authority's answer, an outage): the till saw it signed, or soon will. A parked sale
      // waits for a person, so its refund is refused rather than left waiting with it.
      if (status === 'RUNNING' && state.step !== 'parked')
        throw ApplicationFailure.retryable(`the sale is being signed (step ${state.step})`, 'sale_signing');
      if (!signed || state.sale === null)
        return { found: 'refused', reason: `the sale is not signed (step ${state.step}, run ${status.toLowerCase()})` };
      return {
        found: 'record',
        sale: state.sale,
        lines: state.lines ?? [],
        signedAt: state.signedAt ?? null,
        refundDeadline: state.refundDeadline,
        ...(state.branchId ? { branchId: state.branchId } : {}),
        stockMovements: state.stockMovements,
      };
    },
  };
}
