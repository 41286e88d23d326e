export { ComplianceClient } from './client.js';
export type {
  BusinessCallOptions,
  CallOptions,
  ComplianceClientOptions,
  PurchasePage,
  ReceiptDocument,
} from './client.js';
export * from './schemas.js';
export {
  IDEMPOTENCY_KEY_PATTERN,
  LIMITS,
  RequestValidator,
  fieldPath,
  validateIdempotencyKey,
  validatePathId,
} from './requests.js';
export type {
  CodeListsQuery,
  CreateCreditNoteInput,
  CreateItemInput,
  CreateSaleInput,
  CustomerInput,
  ItemClassificationsQuery,
  ListPurchasesQuery,
  RegisterItemInput,
  RequestValidationOptions,
  SaleLineInput,
  StockAdjustmentInput,
} from './requests.js';
export { CALLBACK_URL_MAX_LENGTH, callbackUrlProblem, isLoopbackHost } from './callback-url.js';
export type { CallbackUrlOptions } from './callback-url.js';
