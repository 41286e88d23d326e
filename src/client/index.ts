export { SalesClient, connectSalesClient } from './sales-client.js';
export { loadTemporalSettings, TemporalConnectionError } from '../temporal/connection.js';
export type { TemporalSettings } from '../temporal/connection.js';
export type {
  ConnectedSalesClient,
  AwaitReceiptOptions,
  OperationOptions,
  SaleReceiptAnswer,
  SalesClientOptions,
  StartSaleResult,
} from './sales-client.js';
export type { OperationFailure, SaleOperation } from './errors.js';
export type { InputProblem } from '../contracts/sale-input.js';
export {
  SaleInputConflictError,
  SaleInputError,
  SaleOperationError,
  parseCancelArgs,
  parseItemFixedArgs,
  parseRefundRequest,
  parseSaleInput,
  parseSaleReference,
  refundRequestSchema,
  saleInputSchema,
} from './errors.js';
export { parseDuration } from '../contracts/duration.js';
export { saleDetails, saleSummary } from './sale-start.js';
export { SALE_WORKFLOW_TYPE } from '../contracts/sale.js';
export type {
  AwaitReceiptRequest,
  ReceiptAnswer,
  ReceiptSummary,
  RefundRequest,
  RefundResult,
  SaleInput,
  SaleState,
} from '../contracts/sale.js';
export { syncPurchasesNow, PurchasesSyncError } from './purchases.js';
export type { SyncPurchasesOptions, SyncPurchasesResult } from './purchases.js';
export {
  SyncBatchClient,
  SyncBatchOperationError,
  connectSyncBatchClient,
  parseSyncBatchId,
  parseSyncBatchInput,
} from './sync-batches.js';
export type { StartSyncBatchResult } from './sync-batches.js';
export { syncBatchWorkflowId } from '../contracts/sync-batch.js';
export type { SyncBatchInput, SyncBatchState, SyncBatchSummary } from '../contracts/sync-batch.js';
