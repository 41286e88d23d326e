// A control unit's day as its book counts it, and a till's close matched against it: docs/fiscal-day.md.
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  DEFAULT_FISCAL_DAY_SETTINGS,
  FISCAL_DAY_TASK_TIMEOUT,
  FISCAL_DAY_WORKFLOW_TYPE,
  closeFiscalDayUpdate,
  fiscalDaySchemas,
  fiscalDayWorkflowId,
  getFiscalDayQuery,
  matchTillCloseUpdate,
  nairobiDate,
  type FiscalDayInput,
  type FiscalDayKey,
  type FiscalDaySummary,
  type TillClose,
  type TillMatch,
} from '../contracts/fiscal-day.js';
import { checkInput } from '../contracts/sale-input.js';
import { mapBounded } from '../tenants/probes.js';
import { SaleInputError, WorkflowOperationError } from './errors.js';
import { queryLiteral } from './parked-sales.js';
import { runOperation, TaskQueueClient, type TaskQueueClientOptions } from './sales-client.js';

export interface FiscalDayFilter {
  /** `YYYY-MM-DD` (default: today in Nairobi). */
  date?: string;
  scuId?: string;
  /** Only the control units whose documents named this branch. */
  branchId?: string;
}

const READ_AT_ONCE = 8;

export type FiscalDayOperation = 'matchTillClose' | 'close';

export class FiscalDayOperationError extends WorkflowOperationError<FiscalDayOperation> {
  override readonly name = 'FiscalDayOperationError';
}

export class FiscalDaysClient extends TaskQueueClient {
  constructor(client: Client, options: TaskQueueClientOptions = {}) {
    super(client, options);
  }

  /** The business's day books of that date: a named control unit read at once, the others found through visibility. */
  async days(businessId: string, filter: FiscalDayFilter = {}): Promise<FiscalDaySummary[]> {
    const date = filter.date ?? nairobiDate(Date.now());
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date)))
      throw new SaleInputError('day', [{ field: 'date', reason: 'must be a date, YYYY-MM-DD' }]);
    const ids =
      filter.scuId !== undefined
        ? [fiscalDayWorkflowId(this.taskQueue, { businessId, scuId: filter.scuId, date })]
        : await this.dayIds(businessId, date);
    const days = await mapBounded(ids, READ_AT_ONCE, (id) => this.read(id));
    return days
      .filter((day): day is FiscalDaySummary => day !== undefined)
      .filter((day) => filter.branchId === undefined || day.branchIds.includes(filter.branchId))
      .sort((a, b) => a.scuId.localeCompare(b.scuId));
  }

  /** Checked first; a day with no signed document yet gets its book, so every difference is still named. */
  async matchTillClose(input: unknown): Promise<TillMatch> {
    const checked = checkInput(fiscalDaySchemas().tillClose, input);
    if (!checked.ok) throw new SaleInputError('till close', checked.problems);
    const till: TillClose = checked.value;
    const workflowId = fiscalDayWorkflowId(this.taskQueue, till);
    const { businessId, scuId, date } = till;
    const args: [FiscalDayInput] = [{ businessId, scuId, date, settings: DEFAULT_FISCAL_DAY_SETTINGS }];
    // One per call: the SDK takes a with-start operation once, and a refused call is asked again.
    const startWorkflowOperation = () =>
      new WithStartWorkflowOperation(FISCAL_DAY_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: this.taskQueue,
        args,
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowTaskTimeout: FISCAL_DAY_TASK_TIMEOUT,
      });
    return this.run('matchTillClose', workflowId, () =>
      this.client.workflow.executeUpdateWithStart(matchTillCloseUpdate, {
        args: [till],
        startWorkflowOperation: startWorkflowOperation(),
      }),
    );
  }

  /** Closes a running day before its time (the demo, an accountant): later documents are amendments. */
  async close(day: FiscalDayKey): Promise<FiscalDaySummary> {
    const workflowId = fiscalDayWorkflowId(this.taskQueue, day);
    return this.run('close', workflowId, () =>
      this.client.workflow.getHandle(workflowId).executeUpdate(closeFiscalDayUpdate),
    );
  }

  private run<T>(operation: FiscalDayOperation, workflowId: string, call: () => Promise<T>): Promise<T> {
    return runOperation(FiscalDayOperationError, operation, workflowId, call, { subject: 'day book ' });
  }

  private async dayIds(businessId: string, date: string): Promise<string[]> {
    const query =
      `WorkflowType = '${FISCAL_DAY_WORKFLOW_TYPE}' AND ` +
      `TaskQueue = ${queryLiteral('day', 'taskQueue', this.taskQueue)} AND ` +
      `BusinessId = ${queryLiteral('day', 'businessId', businessId)} AND ` +
      `FiscalDay STARTS_WITH '${date}/'`;
    const ids = new Set<string>();
    for await (const execution of this.client.workflow.list({ query })) ids.add(execution.workflowId);
    return [...ids];
  }

  /** A running book answers its query; an ended one its result. */
  private async read(workflowId: string): Promise<FiscalDaySummary | undefined> {
    const handle = this.client.workflow.getHandle(workflowId);
    try {
      const { status } = await handle.describe();
      if (status.name === 'RUNNING') return await handle.query(getFiscalDayQuery);
      if (status.name === 'COMPLETED') return (await handle.result()) as FiscalDaySummary;
      return undefined;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }
}
