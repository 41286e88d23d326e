// Every metric the worker publishes of its own, declared once; the conventions are in docs/metrics.md.
// Imports only contract constants: the workflow bundle imports this file.
import { AUTHORITY_CAUSES, COMPLIANCE_ERROR_CODES } from '../contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../contracts/failures.js';
import type { OutageSide } from '../contracts/outage-watch.js';

export const OTHER = 'other';

export type BusinessProcess = 'purchases' | 'reconciliation';

/** Applications with a series of their own, at most: a file of more shares `other` beyond it. */
export const APPLICATION_LABELS_MAX = 2_000;

/** Codes the services and the worker use; any other code is still logged verbatim, but labelled `other`. */
export const KNOWN_CODES: readonly string[] = unique([
  // compliance service (compliance-api.md, error codes)
  ...COMPLIANCE_ERROR_CODES,
  // accounting service (accounting-api.md)
  ...['unauthorized', 'invalid_signature', 'conflict', 'validation_error', 'service_unavailable'],
  // the authority's causes
  ...Object.values(AUTHORITY_CAUSES),
  // the transport (src/http/errors.ts)
  ...['network_error', 'timeout', 'connection_reset', 'aborted', 'invalid_response'],
  // the worker's failure types and park codes
  ...Object.values(FAILURE_TYPES),
  ...['item_needs_fixing', 'outcome_timeout', 'authority_failed', 'receipt_missing', 'error'],
]);

/** `answered_with_outcome`: a 422 carrying a document. */
export const API_CALL_OUTCOMES: readonly string[] = unique(['ok', 'answered_with_outcome', ...KNOWN_CODES]);

export const COMPLIANCE_OPERATIONS = [
  ...['adjustStock', 'createItem', 'createSale', 'createCreditNote', 'getIdentity', 'getSale', 'listBusinesses'],
  ...['listCodeLists', 'listItemClassifications', 'listItems', 'listPurchases', 'pullPurchases', 'registerItem'],
  ...['retrySale'],
] as const;

export const CALLBACK_VERDICTS = [
  ...['accepted', 'duplicate', 'throttled', 'ignored'],
  // result callbacks (src/callbacks/routes.ts)
  ...['invalid_token', 'expired_token', 'signal_failed', 'not_found'],
  ...['bad_request', 'body_too_large', 'internal_error'],
  // refused before a route (src/callbacks/server.ts): over the connection cap, timed out, malformed HTTP
  ...['connection_refused', 'timeout', 'header_too_large', 'malformed_request'],
  // accounting webhooks (src/callbacks/accounting-webhooks.ts)
  ...['missing_signature', 'invalid_signature', 'stale_timestamp', 'malformed_timestamp', 'malformed_payload'],
  ...['missing_sync_batch_id', 'unknown_application'],
] as const;

/** The workflows an operator may have to act on (`NeedsAttention = true` while running). */
export const OPERATOR_WORKFLOW_TYPES = [
  'saleWorkflow',
  'refundWorkflow',
  'itemRegistrationWorkflow',
  'syncBatchWorkflow',
  'stockLedgerWorkflow',
] as const;

/** Whose outage a sale waits out: the compliance service's, or the tax authority's behind it. */
export const OUTAGE_SIDES = ['service', 'authority'] as const satisfies readonly OutageSide[];

const FINDING_KINDS = (
  'purchases bill_payments matched suggested amount_mismatches unpaid_purchases unmatched_payments ' +
  'rejected_purchases ties'
).split(' ');

const SERVICES = ['compliance', 'accounting'] as const;

/**
 * Fixed values; or a `business_id` taking the businesses its process serves, or an `application` taking the
 * applications the worker serves (by the tenants file's names): their series start at zero once served; or what
 * names the process itself, one value for its lifetime.
 */
type LabelSet =
  | readonly string[]
  | { readonly businessesOf: BusinessProcess }
  | { readonly applicationsServed: true }
  | { readonly thisProcess: true };

interface MetricSpec {
  kind: 'counter' | 'gauge';
  help: string;
  /** The metric's own labels (besides `namespace` and `task_queue`) and the values each may take. */
  labels: Readonly<Record<string, LabelSet>>;
}

const counter = <const L extends Record<string, LabelSet>>(help: string, labels: L) =>
  ({ kind: 'counter', help, labels }) as const;
const gauge = <const L extends Record<string, LabelSet>>(help: string, labels: L) =>
  ({ kind: 'gauge', help, labels }) as const;

const BY_PURCHASES_BUSINESS = { business_id: { businessesOf: 'purchases' } } as const;
const BY_RECONCILED_BUSINESS = { business_id: { businessesOf: 'reconciliation' } } as const;
const BY_APPLICATION = { application: { applicationsServed: true } } as const;
const THIS_PROCESS = { thisProcess: true } as const;

export const METRICS = {
  // The process
  etims_worker_build_info: gauge(
    'Always 1: the Worker Deployment Version this worker process runs as (its deployment name and build id).',
    { deployment_name: THIS_PROCESS, build_id: THIS_PROCESS },
  ),
  etims_worker_task_queues_unregistered: gauge(
    'Task queues this process polls that its Worker Deployment Version does not hold (the server refused them, ' +
      'e.g. past matching.maxTaskQueuesInDeploymentVersion): the businesses served there wait.',
    {},
  ),
  // Sales (workflow code)
  etims_sales_signed: counter('Sales signed by the authority (once per sale).', {}),
  etims_sales_parked: counter('Times a sale was parked for an operator, by the code it was parked with.', {
    code: KNOWN_CODES,
  }),
  etims_sales_failed: counter('Sales that ended failed (nothing more will be sent), by failure type.', {
    reason: KNOWN_CODES,
  }),
  etims_sales_cancelled: counter('Unsigned sales cancelled by an operator.', {}),
  etims_sales_outage_waits: counter(
    "Times a sale began waiting out an outage by itself, by whose: the compliance service's or the authority's.",
    { side: OUTAGE_SIDES },
  ),
  etims_sales_business_waits: counter(
    'Sales that began waiting for their business to be served (a tenants file not yet reloaded with it).',
    {},
  ),
  etims_credit_notes_signed: counter('Credit notes signed by the authority (refunds).', {}),
  // The day's close (workflow code)
  etims_fiscal_day_closes: counter(
    "Control units' days closed, by whether receipt numbers between the day's first and last were never seen " +
      '(signed by another system on the same control unit, or lost).',
    { unaccounted: ['yes', 'no'] },
  ),
  etims_fiscal_day_amendments: counter(
    'Amendments delivered for closed days (documents that came after the close).',
    {},
  ),
  etims_fiscal_day_till_differences: counter("Till closes matched against a day's book that differed from it.", {}),
  etims_stock_movements_needing_operator: counter(
    "Stock movements handed to an operator (outcome unknown or refused), by the movement's action.",
    { action: ['ADD', 'DEDUCT'] },
  ),
  // Operator work and outages (the worker's periodic counts of running workflows in Temporal's visibility)
  etims_operator_work_waiting: gauge(
    'Running workflows of this task queue waiting for an operator (NeedsAttention = true), by workflow type.',
    { workflow_type: OPERATOR_WORKFLOW_TYPES },
  ),
  etims_sales_awaiting_outage: gauge(
    'Running sales of this task queue waiting out an outage by themselves now (FiscalStatus awaiting_<side>), by side.',
    { side: OUTAGE_SIDES },
  ),
  etims_application_sales_awaiting_outage: gauge(
    "Sales waiting on an application's outage watch now, by application and side (from the running watches' memos).",
    { ...BY_APPLICATION, side: OUTAGE_SIDES },
  ),
  // API calls (activities)
  etims_api_calls: counter(
    'API calls made by activity attempts, by service and outcome (ok, answered_with_outcome or the failure code).',
    { service: SERVICES, outcome: API_CALL_OUTCOMES },
  ),
  etims_api_rate_limited: counter('API calls answered 429 (rate budget exceeded), by service.', { service: SERVICES }),
  // The compliance rate budget (the compliance client)
  etims_compliance_requests: counter('HTTP requests sent to the compliance service by this worker, by operation.', {
    operation: COMPLIANCE_OPERATIONS,
  }),
  etims_compliance_rate_budget_per_second: gauge(
    "The compliance task queue's rate budget: activity starts allowed per second, fleet-wide.",
    {},
  ),
  etims_compliance_rate_limit_remaining: gauge(
    'The last X-RateLimit-Remaining the compliance service answered this worker with.',
    {},
  ),
  // Each compliance application (`default` for a single-key worker)
  etims_application_requests: counter(
    'HTTP requests sent to the compliance service by this worker, by the application whose key sent them.',
    BY_APPLICATION,
  ),
  etims_application_rate_limited: counter(
    'Compliance requests answered 429 (its rate window spent), by application.',
    BY_APPLICATION,
  ),
  etims_application_budget_per_second: gauge(
    "An application's rate budget on the compliance queue: its activity starts allowed per second, fleet-wide.",
    BY_APPLICATION,
  ),
  etims_application_rate_limit_remaining: gauge(
    "The last X-RateLimit-Remaining the compliance service answered an application's key with.",
    BY_APPLICATION,
  ),
  // The tenants file
  etims_tenants_reloads: counter(
    'Changes of the tenants file acted on: applied, refused (the file asks what the services do not allow) ' +
      'or failed (a service could not be asked; tried again).',
    { outcome: ['applied', 'refused', 'failed'] },
  ),
  // Result callbacks (the receiver)
  etims_callbacks: counter('Result callbacks and webhooks answered by the receiver, by verdict.', {
    verdict: CALLBACK_VERDICTS,
  }),
  // Purchases sync (workflow code)
  etims_purchases_syncs: counter('Purchases syncs ended, by business and outcome.', {
    ...BY_PURCHASES_BUSINESS,
    outcome: ['succeeded', 'failed'],
  }),
  etims_purchases_sync_last_success_timestamp_seconds: gauge(
    'When the last purchases sync of a business succeeded (Unix seconds).',
    BY_PURCHASES_BUSINESS,
  ),
  etims_purchase_events_delivered: counter(
    'Purchase events delivered to the sink, by business.',
    BY_PURCHASES_BUSINESS,
  ),
  etims_purchase_events_pending: gauge(
    "Purchase events the sink did not take in a business's last successful sync: the next sync delivers them.",
    BY_PURCHASES_BUSINESS,
  ),
  etims_purchases_sink_failures: counter(
    'Syncs in which the purchases sink did not take events, by business.',
    BY_PURCHASES_BUSINESS,
  ),
  // Stock-in from confirmed supplier invoices (workflow code)
  etims_stock_in_lines: counter(
    'Supplier invoice lines of the stock-in, by business and what became of them: added to stock, taken back ' +
      '(the invoice left confirmed), corrected onto another item, or waiting for a mapping.',
    { ...BY_PURCHASES_BUSINESS, outcome: ['added', 'taken_back', 'corrected', 'waiting'] },
  ),
  etims_stock_in_lines_waiting: gauge(
    'Lines of confirmed supplier invoices that wait for a person to map them, by business.',
    BY_PURCHASES_BUSINESS,
  ),
  // Reconciliation (workflow code)
  etims_reconciliations: counter('Reconciliations ended, by business and outcome.', {
    ...BY_RECONCILED_BUSINESS,
    outcome: ['succeeded', 'failed'],
  }),
  etims_reconciliation_last_success_timestamp_seconds: gauge(
    'When the last reconciliation of a business succeeded (Unix seconds).',
    BY_RECONCILED_BUSINESS,
  ),
  etims_reconciliation_findings: gauge("What a business's last successful reconciliation found, by kind.", {
    ...BY_RECONCILED_BUSINESS,
    kind: FINDING_KINDS,
  }),
  // Sync batches (workflow code)
  etims_sync_batches: counter('Accounting sync batches ended, by outcome.', {
    outcome: ['synced', 'dismissed', 'failed'],
  }),
  etims_sync_batches_parked: counter('Times an accounting sync batch was parked for an operator.', {}),
} as const satisfies Record<string, MetricSpec>;

export type MetricName = keyof typeof METRICS;
export type CounterName = { [N in MetricName]: (typeof METRICS)[N]['kind'] extends 'counter' ? N : never }[MetricName];
export type GaugeName = { [N in MetricName]: (typeof METRICS)[N]['kind'] extends 'gauge' ? N : never }[MetricName];
/** The labels a metric takes: every one of its own, as plain strings (bounded when recorded). */
export type LabelsOf<N extends MetricName> = { [L in keyof (typeof METRICS)[N]['labels']]: string };

type ServedBusinesses = Readonly<Record<BusinessProcess | 'applications', ReadonlySet<string>>>;

/** The served set whose values the metric's dynamic label takes, if it has one. */
export function servedSetOf(name: MetricName): BusinessProcess | 'applications' | undefined {
  for (const set of Object.values(METRICS[name].labels) as LabelSet[]) {
    if (Array.isArray(set) || 'thisProcess' in set) continue;
    return 'businessesOf' in set ? set.businessesOf : 'applications';
  }
  return undefined;
}

/** A label's value as published: itself when in the label's set or served, `other` otherwise. */
export function boundedValue(set: LabelSet, value: string, served: ServedBusinesses): string {
  if (Array.isArray(set)) return (set as readonly string[]).includes(value) ? value : OTHER;
  if ('thisProcess' in set) return value;
  const known = 'businessesOf' in set ? served[set.businessesOf] : served.applications;
  return known.has(value) ? value : OTHER;
}

/** What start-up publishes at zero; `businesses` stands for the served set of the dynamic label, if any. */
export function initialSeries(name: MetricName, businesses: readonly string[]): Array<Record<string, string>> {
  let series: Array<Record<string, string>> = [{}];
  for (const [label, set] of Object.entries(METRICS[name].labels) as Array<[string, LabelSet]>) {
    const values = Array.isArray(set) ? unique([...(set as readonly string[]), OTHER]) : businesses;
    series = series.flatMap((s) => values.map((v) => ({ ...s, [label]: v })));
  }
  return series;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
