// A plain start and an update-with-start alike: the same options, and the same answer to another input.
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import { BusinessId, FiscalStatus, NeedsAttention, TraderInvoiceNumber } from '../contracts/search-attributes.js';
import { SALE_WORKFLOW_TYPE, saleWorkflowId, type SaleInput } from '../contracts/sale.js';
import { saleInputDifferences } from '../contracts/sale-input.js';
import { SaleInputConflictError } from './errors.js';
import { readStartedInput } from './started-input.js';
import { saleDetails, saleSummary } from './summary.js';

export { SALE_WORKFLOW_TYPE };

export type SaleWorkflow = (input: SaleInput) => Promise<unknown>;

export function saleStartOptions(sale: SaleInput): Omit<WorkflowStartOptions<SaleWorkflow>, 'taskQueue'> {
  return {
    workflowId: saleWorkflowId(sale.businessId, sale.traderInvoiceNumber),
    args: [sale],
    // A finished sale is never filed again: its invoice number is spent.
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: BusinessId, value: sale.businessId },
      { key: TraderInvoiceNumber, value: sale.traderInvoiceNumber },
      { key: FiscalStatus, value: 'pending' },
      { key: NeedsAttention, value: false },
    ],
    staticSummary: saleSummary(sale),
    staticDetails: saleDetails(sale),
    // The sale's workflow tasks queue fairly between businesses, as its API calls do.
    priority: { fairnessKey: sale.businessId },
  };
}

/** Read from its history, so a closed sale and a sale no worker runs yet are checked too. */
export async function assertStartedWith(
  client: Client,
  workflowId: string,
  runId: string | undefined,
  asked: SaleInput,
): Promise<void> {
  // What another SDK or the Temporal CLI started may not be a SaleInput at all; every difference is then named.
  const started = (await readStartedInput(client, workflowId, runId)) as SaleInput;
  const fields = saleInputDifferences(started, asked);
  if (fields.length > 0) throw new SaleInputConflictError(workflowId, fields);
}
