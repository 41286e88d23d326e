/**
 * The failure types every process branches on, declared once for workflows, activities, clients and CLIs.
 */
/**
 * The `type` of every failure the activities raise that is not the API's own error `code` (those pass through
 * verbatim: `authority_rejected`, `already_credited`, `not_found`, …). The same snake_case convention as the
 * API's codes, so the workflow and retry policies branch on one kind of name.
 */
export const FAILURE_TYPES = {
  /** A write may or may not have happened; repeating it blindly could duplicate it. Never retried. */
  ambiguousWrite: 'ambiguous_write',
  rateLimited: 'rate_limited',
  invalidRequest: 'invalid_request',
  unexpectedResponse: 'unexpected_response',
  /** The document is still with the tax authority: a poll, not a fault. */
  documentInFlight: 'document_in_flight',
  itemNotFound: 'item_not_found',
  notConfigured: 'not_configured',
  /** The API's refusal of a second credit note for one sale. */
  alreadyCredited: 'already_credited',
  /** An operator's update the workflow refuses in its current state. */
  invalidOperation: 'invalid_operation',
  /** A start whose input the workflow cannot use (plain-JSON starts skip the client's validation). */
  invalidInput: 'invalid_input',
  itemRegistrationFailed: 'item_registration_failed',
  /** A sale with this invoice number was already started with another input; the differing fields are named. */
  saleInputConflict: 'sale_input_conflict',
  /**
   * A call for a business no compliance application of the worker's tenants serves (never onboarded, or removed).
   * Not retried: only a change of the tenants makes it pass.
   */
  businessNotServed: 'business_not_served',
  /** An accounting call for a company no accounting application is linked for (or naming none among several). */
  companyNotServed: 'company_not_served',
  /** A branch name the business's listing does not show (yet): retried, its stock never guessed to another ledger. */
  unknownBranch: 'unknown_branch',
} as const;

/** `ambiguous_write` was `AmbiguousWrite` before 0.2: histories recorded then still carry the old name. */
export function isAmbiguousWrite(type: string | null | undefined): boolean {
  return type === FAILURE_TYPES.ambiguousWrite || type === 'AmbiguousWrite';
}
