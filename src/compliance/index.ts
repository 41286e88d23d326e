export { ComplianceClient } from './client.js';
export type {
  BusinessCallOptions,
  CallOptions,
  ComplianceClientOptions,
  PurchasePage,
  ReceiptDocument,
} from './client.js';
export * from './schemas.js';
export type {
  CodeListsQuery,
  CreateCreditNoteInput,
  CreateItemInput,
  CreateSaleInput,
  ItemClassificationsQuery,
  ListPurchasesQuery,
  RegisterItemInput,
  StockAdjustmentInput,
} from './requests.js';
