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
} as const;

/** `ambiguous_write` was `AmbiguousWrite` before 0.2: histories recorded then still carry the old name. */
export function isAmbiguousWrite(type: string | null | undefined): boolean {
  return type === FAILURE_TYPES.ambiguousWrite || type === 'AmbiguousWrite';
}
