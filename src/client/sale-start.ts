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
import { saleWorkflowId, type SaleInput, type SaleLineInput } from '../contracts/sale.js';
import { refundWorkflowId, type RefundInput } from '../contracts/refund.js';
import { saleInputDifferences } from '../contracts/sale-input.js';
import { SaleInputConflictError } from './errors.js';

export type SaleWorkflow = (input: SaleInput) => Promise<unknown>;
export type RefundWorkflow = (input: RefundInput) => Promise<unknown>;

/** One refund per sale; a refused one (the workflow failed) may be asked again, a completed one is spent. */
export function refundStartOptions(input: RefundInput): Omit<WorkflowStartOptions<RefundWorkflow>, 'taskQueue'> {
  return {
    workflowId: refundWorkflowId(input.businessId, input.traderInvoiceNumber),
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    typedSearchAttributes: startAttributes(input, 'refunding'),
    staticSummary: `Refund of sale ${input.traderInvoiceNumber} by credit note ${input.request.traderInvoiceNumber}`,
    priority: salePriority(input),
  };
}

export function saleStartOptions(sale: SaleInput): Omit<WorkflowStartOptions<SaleWorkflow>, 'taskQueue'> {
  return {
    workflowId: saleWorkflowId(sale.businessId, sale.traderInvoiceNumber),
    args: [sale],
    // A finished sale is never filed again: its invoice number is spent.
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: startAttributes(sale, 'pending'),
    staticSummary: saleSummary(sale),
    staticDetails: saleDetails(sale),
    priority: salePriority(sale),
  };
}

/** Only a start sets the keywords: without them a search by business or invoice misses the workflow. */
function startAttributes(
  { businessId, traderInvoiceNumber }: Pick<SaleInput, 'businessId' | 'traderInvoiceNumber'>,
  status: string,
) {
  return [
    { key: BusinessId, value: businessId },
    { key: TraderInvoiceNumber, value: traderInvoiceNumber },
    { key: FiscalStatus, value: status },
    { key: NeedsAttention, value: false },
  ];
}

/** A till waits: ahead of background work, and fair between businesses as its API calls are. */
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

export async function readStartedInput(
  client: Client,
  workflowId: string,
  runId: string | undefined,
): Promise<unknown> {
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

/** Temporal's documented limits for a workflow's static summary and details (UTF-8 bytes). */
const SUMMARY_MAX_BYTES = 200;
const DETAILS_MAX_BYTES = 20_000;

/** An amount in cents, rounded half up as the service rounds; float noise (1.005 * 100 = 100.4999…) removed first. */
const toCents = (amount: number): number => Math.round(Number((amount * 100).toPrecision(12)));

const lineTotalCents = (line: SaleLineInput): number => toCents(line.quantity * line.unitPrice);
const saleTotal = (input: SaleInput): string =>
  formatCents(input.lines.reduce((sum, line) => sum + lineTotalCents(line), 0));

const MONEY = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const formatCents = (cents: number): string => MONEY.format(cents / 100);

/** A unit price as given when it has more than two decimals (fuel is sold at 182.345), else like money. */
function formatPrice(amount: number): string {
  const cents = toCents(amount);
  return Math.abs(cents / 100 - amount) < 1e-9 ? formatCents(cents) : String(amount);
}

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** At most `max` UTF-8 bytes, ending in '…' when cut (`encodeInto` never writes part of a character). */
function truncate(text: string, max: number): string {
  if (bytes(text) <= max) return text;
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(max - bytes('…')));
  return `${text.slice(0, read)}…`;
}

/** One line: `Sale INV-1 · business biz_1 · 3 lines · total KES 1,250.00`. */
export function saleSummary(input: SaleInput): string {
  const line = [
    `Sale ${input.traderInvoiceNumber}`,
    `business ${input.businessId}`,
    `${input.lines.length} line${input.lines.length === 1 ? '' : 's'}`,
    `total KES ${saleTotal(input)}`,
  ];
  return truncate(line.join(' · ').replace(/\s+/g, ' '), SUMMARY_MAX_BYTES);
}

/** Markdown table cells: a '|' or a line break would end the cell or the row. */
const cell = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** For the UI, without phone or email; a long sale lists as many lines as fit, then says how many more. */
export function saleDetails(input: SaleInput): string {
  const facts = [
    `**Sale** ${cell(input.traderInvoiceNumber)} of **${cell(truncate(input.businessId, 100))}**, ` +
      `dated ${input.saleDate}`,
    input.branchId !== undefined ? `branch ${cell(truncate(input.branchId, 100))}` : undefined,
    input.paymentTypeCode !== undefined ? `payment type ${cell(truncate(input.paymentTypeCode, 50))}` : undefined,
    input.customer?.name !== undefined ? `customer ${cell(truncate(input.customer.name, 100))}` : undefined,
    input.customer?.pin !== undefined ? `customer PIN ${cell(truncate(input.customer.pin, 50))}` : undefined,
  ].filter((fact) => fact !== undefined);

  const head = [
    facts.join(', '),
    '',
    '| # | Item | Description | Quantity | Unit price | Line total |',
    '|---:|---|---|---:|---:|---:|',
  ];
  const foot = ['', `**Total** KES ${saleTotal(input)}`];

  const rows: string[] = [];
  // Room for the "more lines" note, which needs at most ~100 bytes.
  const budget = DETAILS_MAX_BYTES - 100;
  let size = bytes([...head, ...foot].join('\n'));
  for (const [index, line] of input.lines.entries()) {
    const cells = [
      index + 1,
      cell(truncate(line.itemId, 60)),
      cell(truncate(line.description ?? '', 80)),
      line.quantity,
      formatPrice(line.unitPrice),
      formatCents(lineTotalCents(line)),
    ];
    const row = `| ${cells.join(' | ')} |`;
    if (size + bytes(row) + 1 > budget) {
      rows.push('', `… and ${input.lines.length - index} more line(s), not shown here (see the workflow input).`);
      break;
    }
    rows.push(row);
    size += bytes(row) + 1;
  }
  return [...head, ...rows, ...foot].join('\n');
}
