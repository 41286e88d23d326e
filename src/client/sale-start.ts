// A plain start and an update-with-start alike: the same options, and the same answer to another input.
import {
  ApplicationFailure,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Payload, WorkflowSerializationContext } from '@temporalio/common';
import { FAILURE_TYPES } from '../contracts/failures.js';
import { BusinessId, FiscalStatus, NeedsAttention, TraderInvoiceNumber } from '../contracts/search-attributes.js';
import { PRIORITY } from '../contracts/priority.js';
import { saleWorkflowId, type SaleInput } from '../contracts/sale.js';
import { saleInputDifferences } from '../contracts/sale-input.js';
import { SaleInputConflictError } from './errors.js';
import { saleDetails, saleSummary } from './summary.js';

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
    priority: salePriority(sale),
  };
}

/**
 * A till waits: a sale's workflow tasks go ahead of background work on a busy worker, and queue fairly between
 * businesses, as its API calls do.
 */
export function salePriority(sale: Pick<SaleInput, 'businessId'>): { priorityKey: number; fairnessKey: string } {
  return { priorityKey: PRIORITY.signing, fairnessKey: sale.businessId };
}

/** Read from its history, so a closed sale and a sale no worker runs yet (a query would need one) are checked too. */
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

/** The workflow names the fields in the failure's details (`{ fields: string[] }` or the list itself). */
export function conflictOf(err: unknown, workflowId: string): SaleInputConflictError | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const failure = err.cause;
  if (!(failure instanceof ApplicationFailure) || failure.type !== FAILURE_TYPES.saleInputConflict) return undefined;
  const detail: unknown = failure.details?.[0];
  const list = typeof detail === 'object' && detail !== null && 'fields' in detail ? detail.fields : detail;
  const fields = Array.isArray(list) ? list.filter((field): field is string => typeof field === 'string') : [];
  return new SaleInputConflictError(workflowId, fields, { cause: err });
}

async function readStartedInput(client: Client, workflowId: string, runId: string | undefined): Promise<unknown> {
  // One event, not the whole history: a sale's can hold hundreds.
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  const payloads = (history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []) as Payload[];
  const context: WorkflowSerializationContext = { type: 'workflow', namespace: client.options.namespace, workflowId };
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  // In the reverse order of encoding, as the SDK decodes.
  let decoded = payloads;
  for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded, context);
  return decoded[0] === undefined ? undefined : payloadConverter.fromPayload(decoded[0]);
}
