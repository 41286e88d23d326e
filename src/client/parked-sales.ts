// Visibility queries over sales, and what a parked sale's state says. A value is only ever a quoted literal: one a
// query cannot match exactly is refused, so a filter never widens to sales it did not name.
import type { Client } from '@temporalio/client';
import { FAILURE_TYPES } from '../contracts/failures.js';
import { businessServedSignal, SALE_WORKFLOW_TYPE, type SaleState, type SaleStep } from '../contracts/sale.js';
import type { Logger } from '../logger.js';
import { SaleInputError } from './errors.js';

export interface ParkedSalesFilter {
  businessId?: string;
  /** The compliance application (tenants file name); only multi-tenant fleets record it on their sales. */
  application?: string;
  /** The park code (default `outage_limit_reached`). */
  reason?: string;
}

export const DEFAULT_PARK_REASON = FAILURE_TYPES.outageLimitReached;

/** `'value'`, a `'` inside escaped; a value a query cannot match exactly is a `SaleInputError` naming `field`. */
export function queryLiteral(subject: string, field: string, value: string): string {
  const refused = (reason: string) => new SaleInputError(subject, [{ field, reason }]);
  if (value.trim() === '') throw refused('must not be empty');
  // Temporal's query converter hands the literal on re-encoded (`\\`, `\"`, `\n`) and with the quotes at its ends
  // trimmed: such a value would never match itself, so a filter on it would silently find nothing.
  if (/[\p{Cc}"\\]/u.test(value))
    throw refused('must not contain a control character, " or \\ (a query cannot match it)');
  if (value.startsWith("'") || value.endsWith("'"))
    throw refused("must not start or end with ' (a query cannot match it)");
  return `'${value.replaceAll("'", "\\'")}'`;
}

const runningSales = (subject: string, taskQueue: string) =>
  `WorkflowType = '${SALE_WORKFLOW_TYPE}' AND TaskQueue = ${queryLiteral(subject, 'taskQueue', taskQueue)} AND ` +
  "ExecutionStatus = 'Running'";

export function parkedSalesQuery(taskQueue: string, filter: ParkedSalesFilter): string {
  const subject = 'parked sales filter';
  const { businessId, application, reason = DEFAULT_PARK_REASON } = filter;
  if (businessId === undefined && application === undefined)
    throw new SaleInputError(subject, [{ field: 'businessId', reason: 'or application must be given' }]);
  return [
    runningSales(subject, taskQueue),
    'NeedsAttention = true',
    `AttentionReason = ${queryLiteral(subject, 'reason', reason)}`,
    ...(businessId === undefined ? [] : [`BusinessId = ${queryLiteral(subject, 'businessId', businessId)}`]),
    ...(application === undefined ? [] : [`Application = ${queryLiteral(subject, 'application', application)}`]),
  ].join(' AND ');
}

/** The running sales waiting out an outage by themselves; of one application, or of all when none is named. */
export function outageSalesQuery(taskQueue: string, application?: string): string {
  const subject = 'outage sales filter';
  return [
    runningSales(subject, taskQueue),
    // The sales' fiscal statuses while they wait out an outage by themselves (workflows/document/record.ts).
    "FiscalStatus IN ('awaiting_service', 'awaiting_authority')",
    // A sale its outage parked keeps its `awaiting_*` status until resumed: it needs an operator instead.
    'NeedsAttention = false',
    ...(application === undefined ? [] : [`Application = ${queryLiteral(subject, 'application', application)}`]),
  ].join(' AND ');
}

/** The running sales waiting for one of these businesses to be served (`Sale` in workflows/sale/sale.ts). */
export function businessWaitSalesQuery(taskQueue: string, businessIds: readonly string[]): string {
  const subject = 'business wait filter';
  if (businessIds.length === 0)
    throw new SaleInputError(subject, [{ field: 'businessIds', reason: 'must name at least one business' }]);
  const businesses = businessIds.map((id) => queryLiteral(subject, 'businessId', id)).join(', ');
  return [
    runningSales(subject, taskQueue),
    `AttentionReason = '${FAILURE_TYPES.businessNotServed}'`,
    `BusinessId IN (${businesses})`,
  ].join(' AND ');
}

/** Businesses per visibility query: a reload that onboards hundreds stays within a query's length. */
const BUSINESSES_PER_QUERY = 100;

/**
 * Tells the running sales that wait for one of these businesses, now served by this worker's tenants, to try their
 * placement again. Each worker tells after its own reload, so the last one to learn of a business wakes its sales on
 * a worker that serves it; a sale visibility does not list yet finds the business on its own next try.
 */
export async function tellSalesWaitingFor(
  client: Client,
  taskQueue: string,
  businessIds: readonly string[],
  logger: Logger,
): Promise<void> {
  let told = 0;
  for (let start = 0; start < businessIds.length; start += BUSINESSES_PER_QUERY) {
    const query = businessWaitSalesQuery(taskQueue, businessIds.slice(start, start + BUSINESSES_PER_QUERY));
    for await (const sale of client.workflow.list({ query })) {
      try {
        await client.workflow.getHandle(sale.workflowId, sale.runId).signal(businessServedSignal);
        told++;
      } catch (err) {
        // Closed since it was listed (cancelled, or placed by its own timer): nothing to tell.
        logger.debug({ workflowId: sale.workflowId, err: String(err) }, 'a waiting sale could not be told');
      }
    }
  }
  if (told > 0) logger.info({ sales: told, businesses: businessIds.length }, 'told sales their business is served');
}

export interface ParkedSale {
  workflowId: string;
  businessId: string | null;
  traderInvoiceNumber: string | null;
  application: string | null;
}

export interface ParkedSaleView extends ParkedSale {
  step: SaleStep | null;
  parkedSince: string | null;
  message: string | null;
  /** Set when the sale is no longer parked with the reason, or its state could not be read. */
  note?: string;
}

export type ResumeOutcome = { workflowId: string } & (
  | { outcome: 'resumed'; step: SaleStep }
  /** Not parked with the reason (any more): nothing was sent, or the retry's validator refused it. */
  | { outcome: 'refused'; reason: string }
  | { outcome: 'failed'; error: string }
);

/** The park code the sales must still have. */
export type ResumeOptions = Pick<ParkedSalesFilter, 'reason'>;

/** Sales whose state is read or retried at once: enough to be quick, few enough to spare the workers. */
export const PARKED_SALES_CONCURRENCY = 10;

/** Why the id names the situation acted on: docs/starting-sales.md, "Operations". */
export function situationalUpdateId(action: string, state: SaleState): string {
  const latest = state.history.at(-1);
  return `${action}:${state.history.length}@${latest?.at ?? 'start'}`;
}

export function parkedWith(state: SaleState, reason: string) {
  const { parked } = state;
  return parked?.code === reason && parked.actions.includes('retry') ? parked : undefined;
}

export function notParkedWith(state: SaleState, reason: string): string {
  const { parked } = state;
  if (parked === null) return `not parked (step ${state.step})`;
  if (parked.code !== reason) return `parked with ${parked.code}, not ${reason}`;
  return `parked with ${reason}, but retry is not among its actions (${parked.actions.join(', ') || 'none'})`;
}
