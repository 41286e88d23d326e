// Visibility queries over sales. A value is only ever a quoted literal: one a query cannot match exactly is refused,
// so a filter never widens to sales it did not name.
import { FAILURE_TYPES } from '../contracts/failures.js';
import { SALE_WORKFLOW_TYPE } from '../contracts/sale.js';
import { SaleInputError } from './errors.js';

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
