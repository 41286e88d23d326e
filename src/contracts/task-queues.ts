/** Workflows run on `sales` (a historical name); each service's calls on a derived queue, whose limit is the budget. */
export const WORKFLOW_TASK_QUEUE = 'sales';

export function complianceTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}.compliance-api`;
}

/** A rate window that serves several businesses: its own queue, which their fairness keys share. */
export function windowComplianceTaskQueue(workflowTaskQueue: string, window: string): string {
  return `${complianceTaskQueue(workflowTaskQueue)}.${window}`;
}

/** The service publishes no rate limit: the queue's own (ACCOUNTING_ACTIVITIES_PER_SECOND) is the fleet's budget. */
export function accountingTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}.accounting-api`;
}

export type ActivityQueue = 'workflow' | 'compliance' | 'accounting';

/** Workflows schedule each activity on its queue here, and the worker refuses to start if one is missing. */
export const ACTIVITY_QUEUES = {
  checkItems: 'compliance',
  signSale: 'compliance',
  createSale: 'compliance',
  retrySale: 'compliance',
  getDocument: 'compliance',
  readSaleRecord: 'compliance',
  awaitDocumentOutcome: 'compliance',
  registerItem: 'compliance',
  adjustStock: 'compliance',
  createCreditNote: 'compliance',
  createCatalogueItem: 'compliance',
  findCatalogueItem: 'compliance',
  requestItemRegistration: 'workflow', // signal-with-start: Temporal, not the service
  findSignedSale: 'workflow', // the sale's workflow result: Temporal, not the service
  handOverStock: 'workflow', // signal-with-start: Temporal, not the service
  joinOutageWatch: 'workflow', // signal-with-start: Temporal, not the service
  enterFiscalDay: 'workflow', // signal-with-start: Temporal, not the service
  deliverFiscalDay: 'workflow', // to the configured sink
  findTillSales: 'workflow', // Temporal's visibility and descriptions, not the service
  recoverFiscalDay: 'workflow', // Temporal's visibility and the sales' records, not the service
  pullPurchases: 'compliance',
  listPurchasesPage: 'compliance',
  deliverPurchaseEvents: 'workflow', // to the configured sink
  tellStockIn: 'workflow', // signal-with-start: Temporal, not the service
  waitForStockRoom: 'workflow', // a query of a stock workflow: Temporal, not the service
  readPurchaseBooks: 'workflow', // updates of the purchases books: Temporal, not the service
  writePurchaseBooks: 'workflow', // updates of the purchases books: Temporal, not the service
  matchItemNames: 'compliance',
  findStockInMappings: 'workflow', // updates of the mapping buckets: Temporal, not the service
  changeStockInMappings: 'workflow', // updates of the mapping buckets: Temporal, not the service
  checkReconciliationBusiness: 'compliance',
  listReconciliationPurchases: 'compliance',
  checkReconciliationCompany: 'accounting',
  listReconciliationBillPayments: 'accounting',
  placeBusiness: 'workflow', // a local activity reading the worker's tenants
  processSyncBatch: 'accounting',
  listBillPaymentsPage: 'accounting',
} as const satisfies Record<string, ActivityQueue>;

export type ActivityName = keyof typeof ACTIVITY_QUEUES;

export function isActivityName(name: string): name is ActivityName {
  return Object.prototype.hasOwnProperty.call(ACTIVITY_QUEUES, name);
}

export function activityTaskQueue(activity: ActivityName, workflowTaskQueue: string): string {
  return taskQueueOf(ACTIVITY_QUEUES[activity], workflowTaskQueue);
}

export function taskQueueOf(queue: ActivityQueue, workflowTaskQueue: string): string {
  if (queue === 'workflow') return workflowTaskQueue;
  return queue === 'compliance' ? complianceTaskQueue(workflowTaskQueue) : accountingTaskQueue(workflowTaskQueue);
}
