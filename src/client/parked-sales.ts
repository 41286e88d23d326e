// Parked sales found through visibility, then resumed with one retry update each: every sale's own answer is
// reported, and one sale that has moved on meanwhile is refused by its own validator, never retried blindly. A query
// value is only ever a quoted literal: one a query cannot match exactly is refused, so a filter never widens to sales
// it did not name.
import type { Client } from '@temporalio/client';
import { FAILURE_TYPES } from '../contracts/failures.js';
import { Application, BusinessId, TraderInvoiceNumber } from '../contracts/search-attributes.js';
import {
  SALE_WORKFLOW_TYPE,
  getSaleStateQuery,
  retryUpdate,
  type SaleState,
  type SaleStep,
} from '../contracts/sale.js';
import { SaleInputError, SaleOperationError } from './errors.js';
import { runOperation } from './start-or-find.js';
import { mapBounded } from '../tenants/probes.js';

/** Which parked sales: of a business, of an application, or of both at once; parked with `reason`. */
export interface ParkedSalesFilter {
  businessId?: string;
  /** The compliance application (tenants file name); only multi-tenant fleets record it on their sales. */
  application?: string;
  /** The park code (default `outage_limit_reached`). */
  reason?: string;
}

export const DEFAULT_PARK_REASON = FAILURE_TYPES.outageLimitReached;

/** Why `value` cannot be a literal of a visibility query; undefined when it can. */
function literalProblem(value: string): string | undefined {
  if (value.trim() === '') return 'must not be empty';
  // Temporal's query converter hands the literal on re-encoded (`\\`, `\"`, `\n`) and with the quotes at its ends
  // trimmed: such a value would never match itself, so a filter on it would silently find nothing.
  if (/[\p{Cc}"\\]/u.test(value)) return 'must not contain a control character, " or \\ (a query cannot match it)';
  if (value.startsWith("'") || value.endsWith("'")) return "must not start or end with ' (a query cannot match it)";
  return undefined;
}

/** `'value'`, a `'` inside escaped; a value a query cannot match exactly is a `SaleInputError` naming `field`. */
function queryLiteral(subject: string, field: string, value: string): string {
  const problem = literalProblem(value);
  if (problem !== undefined) throw new SaleInputError(subject, [{ field, reason: problem }]);
  return `'${value.replaceAll("'", "\\'")}'`;
}

const runningSales = (subject: string, taskQueue: string) =>
  `WorkflowType = '${SALE_WORKFLOW_TYPE}' AND TaskQueue = ${queryLiteral(subject, 'taskQueue', taskQueue)} AND ` +
  "ExecutionStatus = 'Running'";

/** The running sales of `taskQueue` parked with the filter's reason that need an operator. */
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

/**
 * The running sales of `taskQueue` waiting out an outage by themselves; of one application, or all of them when none
 * is named. A sale its outage parked keeps its `awaiting_*` status until it is resumed: it needs an operator instead.
 */
export function outageSalesQuery(taskQueue: string, application?: string): string {
  const subject = 'outage sales filter';
  return [
    runningSales(subject, taskQueue),
    // The sales' fiscal statuses while they wait out an outage by themselves (workflows/sale/record.ts).
    "FiscalStatus IN ('awaiting_service', 'awaiting_authority')",
    'NeedsAttention = false',
    ...(application === undefined ? [] : [`Application = ${queryLiteral(subject, 'application', application)}`]),
  ].join(' AND ');
}

/** A sale as visibility lists it: its search attributes (null when one is not set). */
export interface ParkedSale {
  workflowId: string;
  businessId: string | null;
  traderInvoiceNumber: string | null;
  application: string | null;
}

/** A listed sale with what its state says now: parked since when and why, or why it would be refused. */
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

export interface ResumeOptions {
  /** The park code the sales must still have (default `outage_limit_reached`). */
  reason?: string;
}

/** Sales whose state is read or retried at once: enough to be quick, few enough to spare the workers. */
export const PARKED_SALES_CONCURRENCY = 10;

/**
 * For an action an operator may need more than once in a sale's life: the id names the situation acted on (the
 * latest history entry), so two clicks on one situation act once, and a later situation acts again.
 */
export function situationalUpdateId(action: string, state: SaleState): string {
  const latest = state.history.at(-1);
  return `${action}:${state.history.length}@${latest?.at ?? 'start'}`;
}

/** Visibility lags the sales by a few seconds. */
export async function findParkedSales(
  client: Client,
  taskQueue: string,
  filter: ParkedSalesFilter,
): Promise<{ query: string; sales: ParkedSale[] }> {
  const query = parkedSalesQuery(taskQueue, filter);
  const sales: ParkedSale[] = [];
  for await (const execution of client.workflow.list({ query })) {
    const attributes = execution.typedSearchAttributes;
    sales.push({
      workflowId: execution.workflowId,
      businessId: attributes.get(BusinessId) ?? null,
      traderInvoiceNumber: attributes.get(TraderInvoiceNumber) ?? null,
      application: attributes.get(Application) ?? null,
    });
  }
  return { query, sales };
}

/** What each sale's state says now (a worker answers the query); a sale whose state cannot be read says why. */
export function viewParkedSales(
  client: Client,
  sales: readonly ParkedSale[],
  options: ResumeOptions = {},
): Promise<ParkedSaleView[]> {
  const reason = options.reason ?? DEFAULT_PARK_REASON;
  return mapBounded(sales, PARKED_SALES_CONCURRENCY, async (sale) => {
    try {
      const state = await readState(client, sale.workflowId);
      const parked = parkedWith(state, reason);
      return {
        ...sale,
        step: state.step,
        parkedSince: parked?.since ?? null,
        message: parked?.message ?? null,
        ...(parked ? {} : { note: `would be refused: ${notParkedWith(state, reason)}` }),
      };
    } catch (err) {
      return { ...sale, step: null, parkedSince: null, message: null, note: `state not read: ${messageOf(err)}` };
    }
  });
}

export function resumeParkedSales(
  client: Client,
  sales: readonly ParkedSale[],
  options: ResumeOptions = {},
): Promise<ResumeOutcome[]> {
  const reason = options.reason ?? DEFAULT_PARK_REASON;
  return mapBounded(sales, PARKED_SALES_CONCURRENCY, (sale) => resumeOne(client, sale.workflowId, reason));
}

async function resumeOne(client: Client, workflowId: string, reason: string): Promise<ResumeOutcome> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    // Visibility may be behind: a sale parked since for another reason is not the operator's to retry here.
    const state = await readState(client, workflowId);
    if (!parkedWith(state, reason)) return { workflowId, outcome: 'refused', reason: notParkedWith(state, reason) };
    // The id `npm run sales -- retry` derives too: a retry of the same park by both acts once.
    const updateId = situationalUpdateId('retry', state);
    const call = () => handle.executeUpdate(retryUpdate, { updateId });
    const after = await runOperation(SaleOperationError, 'retry', workflowId, call, { subject: 'sale ', updateId });
    return { workflowId, outcome: 'resumed', step: after.step };
  } catch (err) {
    // Refused by the validator (parked no longer), or finished meanwhile: the sale is not parked, which is no failure.
    if (err instanceof SaleOperationError && (err.failure === 'rejected' || err.failure === 'not_found'))
      return { workflowId, outcome: 'refused', reason: err.message };
    return { workflowId, outcome: 'failed', error: messageOf(err) };
  }
}

function readState(client: Client, workflowId: string): Promise<SaleState> {
  const handle = client.workflow.getHandle(workflowId);
  return runOperation(SaleOperationError, 'getState', workflowId, () => handle.query(getSaleStateQuery), {
    subject: 'sale ',
  });
}

function parkedWith(state: SaleState, reason: string) {
  const { parked } = state;
  return parked?.code === reason && parked.actions.includes('retry') ? parked : undefined;
}

function notParkedWith(state: SaleState, reason: string): string {
  const { parked } = state;
  if (parked === null) return `not parked (step ${state.step})`;
  if (parked.code !== reason) return `parked with ${parked.code}, not ${reason}`;
  return `parked with ${reason}, but retry is not among its actions (${parked.actions.join(', ') || 'none'})`;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
