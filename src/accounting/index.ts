export {
  AccountingClient,
  MAX_PAGE_LIMIT,
  type AccountingClientOptions,
  type BillPaymentFilters,
  type CallOptions,
  type PagingParams,
} from './client.js';
export * from './schemas.js';
export { SIGNATURE_HEADER, TIMESTAMP_HEADER, signRequest, signatureHeaders, signedMessage, signedPath, type SignRequestInput } from './signing.js';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  WEBHOOK_HEADERS,
  WebhookVerificationError,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  type SignWebhookInput,
  type VerifyWebhookInput,
  type WebhookFailureReason,
} from './webhooks.js';
