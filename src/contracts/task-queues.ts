/**
 * The task queues, declared once. Every workflow runs on the workflow queue (`sales`, its historical name, kept
 * because other services start workflows on it); the calls of each service run on a queue derived from it, whose
 * server-side rate limit is the whole fleet's budget for that service. A deployment (or a test run) on another
 * workflow queue gets its own derived queues, so two never share a budget.
 */
export const WORKFLOW_TASK_QUEUE = 'sales';

/**
 * Every compliance API call runs on this queue, whose server-side rate limit keeps the whole fleet under the
 * service's budget. Derived from the workflow queue so separate deployments (and test runs) never share it.
 */
export function complianceTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}.compliance-api`;
}

/**
 * The compliance calls of one rate window that serves several businesses (an organisation-wide key): a queue of its
 * own, whose rate is the window's budget, so the businesses' fairness keys share it fairly (issue 16). `window` is
 * the service's application id (or the tenants entry's name).
 */
export function windowComplianceTaskQueue(workflowTaskQueue: string, window: string): string {
  return `${complianceTaskQueue(workflowTaskQueue)}.${window}`;
}

/**
 * Every accounting API call runs on this queue: the service publishes no rate limit, so the queue's own
 * server-side limit (ACCOUNTING_ACTIVITIES_PER_SECOND) is the fleet's budget. Derived like the compliance queue.
 */
export function accountingTaskQueue(workflowTaskQueue: string): string {
  return `${workflowTaskQueue}.accounting-api`;
}

/**
 * Where an activity runs: on the queue of the service whose budget it spends, or on the workflow queue when it calls no
 * service.
 */
export type ActivityQueue = 'workflow' | 'compliance' | 'accounting';

/**
 * Every activity's queue, declared once: workflows schedule each activity here (workflows/activity-options.ts) and
 * the worker registers each activity on the worker of this queue (src/worker/workers.ts), which refuses to start
 * if an activity is missing from this table.
 */
export const ACTIVITY_QUEUES = {
  // The sale and item registration
  checkItems: 'compliance',
  signSale: 'compliance',
  createSale: 'compliance',
  retrySale: 'compliance',
  getDocument: 'compliance',
  awaitDocumentOutcome: 'compliance',
  registerItem: 'compliance',
  adjustStock: 'compliance',
  createCreditNote: 'compliance',
  /** Signal-with-start of an item-registration workflow: Temporal, not the service. */
  requestItemRegistration: 'workflow',
  /** Signal-with-start of the branch's stock ledger: Temporal, not the service. */
  handOverStock: 'workflow',
  // The purchases sync
  pullPurchases: 'compliance',
  listPurchasesPage: 'compliance',
  /** To the configured sink: spends no service budget. */
  deliverPurchaseEvents: 'workflow',
  // The reconciliation
  checkReconciliationBusiness: 'compliance',
  listReconciliationPurchases: 'compliance',
  checkReconciliationCompany: 'accounting',
  listReconciliationBillPayments: 'accounting',
  /** Which application's budget a business's calls spend (a local activity): the worker's tenants, not a service. */
  placeBusiness: 'workflow',
  // Sync batches
  processSyncBatch: 'accounting',
  listBillPaymentsPage: 'accounting',
} as const satisfies Record<string, ActivityQueue>;

export type ActivityName = keyof typeof ACTIVITY_QUEUES;

export function isActivityName(name: string): name is ActivityName {
  return Object.prototype.hasOwnProperty.call(ACTIVITY_QUEUES, name);
}

/** The task queue an activity runs on, for workflows on `workflowTaskQueue`. */
export function activityTaskQueue(activity: ActivityName, workflowTaskQueue: string): string {
  return taskQueueOf(ACTIVITY_QUEUES[activity], workflowTaskQueue);
}

export function taskQueueOf(queue: ActivityQueue, workflowTaskQueue: string): string {
  switch (queue) {
    case 'workflow':
      return workflowTaskQueue;
    case 'compliance':
      return complianceTaskQueue(workflowTaskQueue);
    case 'accounting':
      return accountingTaskQueue(workflowTaskQueue);
  }
}
