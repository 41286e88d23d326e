export { SalesClient, connectSalesClient } from './sales-client.js';
export { FiscalDaysClient } from './fiscal-days.js';
export type { FiscalDayFilter } from './fiscal-days.js';
export type { FiscalDaySummary, TillClose, TillMatch } from '../contracts/fiscal-day.js';
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
export {
  MAPPINGS_PER_UPDATE,
  StockInClient,
  StockInNotStartedError,
  StockInOperationError,
  connectStockInClient,
} from './stock-in.js';
export type { ConnectedStockInClient, PutMappingsOptions, PutMappingsResult, StockInOperation } from './stock-in.js';
export {
  MAPPINGS_CSV_COLUMNS,
  MappingsCsvError,
  mappingsFromCsv,
  mappingsToCsv,
  mappingsCsvProblemText,
} from './stock-in-csv.js';
export type { MappingsCsvProblem } from './stock-in-csv.js';
export { parseCorrectLine, parseMapLine, parseMapping, parseMappingKey, parseMappings } from './stock-in-input.js';
export type { CheckedMapping, CorrectLineRequest, MapLineRequest } from './stock-in-input.js';
export { STOCK_IN_WORKFLOW_TYPE, stockInWorkflowId } from '../contracts/stock-in.js';
export type {
  InvoiceLineState,
  InvoiceStock,
  InvoiceStockState,
  Mapping,
  MappingInput,
  MappingKey,
  StockInState,
} from '../contracts/stock-in.js';
