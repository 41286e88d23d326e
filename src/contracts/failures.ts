/** Failure types besides the API's own error codes (passed through verbatim), in the same snake_case. */
export const FAILURE_TYPES = {
  /** A write may or may not have happened; repeating it blindly could duplicate it. Never retried. */
  ambiguousWrite: 'ambiguous_write',
  rateLimited: 'rate_limited',
  invalidRequest: 'invalid_request',
  unexpectedResponse: 'unexpected_response',
  documentInFlight: 'document_in_flight',
  itemNotFound: 'item_not_found',
  notConfigured: 'not_configured',
  alreadyCredited: 'already_credited',
  invalidOperation: 'invalid_operation',
  /** A start whose input the workflow cannot use (plain-JSON starts skip the client's validation). */
  invalidInput: 'invalid_input',
  itemRegistrationFailed: 'item_registration_failed',
  saleInputConflict: 'sale_input_conflict',
  /** No compliance application of the worker's tenants serves the business: not retried. */
  businessNotServed: 'business_not_served',
  /** An accounting call for a company no accounting application is linked for (or naming none among several). */
  companyNotServed: 'company_not_served',
  /** A branch name the business's listing does not show (yet): retried, its stock never guessed to another ledger. */
  unknownBranch: 'unknown_branch',
  /** A call whose application is not known yet: its key was not answered at start-up (an outage). Retried. */
  tenantAwaitingService: 'tenant_awaiting_service',
  /** A call not sent because its application's outage watch holds sales waiting on that side. Retried. */
  outageKnown: 'outage_known',
  /** A refund of a sale that holds a refund window of its own (step `refund_window`): the sale takes its `refund`
   * update itself (src/client/sales-client.ts `refundOpenSale` says when that path ends). */
  saleOpenForRefund: 'sale_open_for_refund',
  /** The park code of a sale whose outage outlasted its `outageLimit`: one code, so one query finds them all. */
  outageLimitReached: 'outage_limit_reached',
} as const;

/** The failure's two spellings, `ambiguous_write` and `AmbiguousWrite`, both met in recorded histories, are one. */
export function isAmbiguousWrite(type: string | null | undefined): boolean {
  return type === FAILURE_TYPES.ambiguousWrite || type === 'AmbiguousWrite';
}
