/**
 * The operation history of a chaos run: every call the driver and the operator made, and every review of a supplier
 * invoice and purchases sync the run asked for, with its outcome.
 */
import type { SaleLineInput } from '../../src/contracts/sale.js';
import type { PlannedRefund, SalePath } from './sales.js';

export type OperationKind = 'start' | 'refund' | 'retry' | 'settleMovement' | 'review' | 'syncPurchases';

/** What an operator does (every one counts as an operator action in the report). */
export const OPERATOR_ACTIONS = ['retry', 'settleMovement'] as const satisfies readonly OperationKind[];

export interface Operation {
  kind: OperationKind;
  /**
   * The planned sale's position; the sale id is `workflowId`. Null: an action on a stock ledger (`workflowId`), a
   * review (`workflowId` the invoice's id) or a sync asked (`workflowId` the schedule's id).
   */
  sale: number | null;
  workflowId: string;
  businessId: string;
  traderInvoiceNumber: string | null;
  /** Milliseconds since the faults started. */
  invokedAtMs: number;
  completedAtMs: number | null;
  attempts: number;
  /** ok: the call answered as asked; failed: it gave up; pending: still unanswered when the run ended. */
  outcome: 'ok' | 'failed' | 'pending';
  /** What the call answered or why it failed (first and last errors when it was repeated). */
  detail: string | null;
  /** Starts: the sale's lines, its path and whether a refund was planned. */
  path?: SalePath;
  lines?: SaleLineInput[];
  refund?: PlannedRefund | null;
  /** Operator calls: the stock movement acted on. */
  referenceId?: string;
  /** settleMovement: what the operator decided from the dashboard. */
  decision?: 'applied' | 'resend';
  /** review: the status the supplier invoice was given. */
  status?: string;
}

export class OperationHistory {
  readonly operations: Operation[] = [];

  constructor(private readonly clock: () => number) {}

  begin(op: Omit<Operation, 'invokedAtMs' | 'completedAtMs' | 'attempts' | 'outcome' | 'detail'>): Operation {
    const entry: Operation = {
      ...op,
      invokedAtMs: this.clock(),
      completedAtMs: null,
      attempts: 0,
      outcome: 'pending',
      detail: null,
    };
    this.operations.push(entry);
    return entry;
  }

  end(op: Operation, outcome: 'ok' | 'failed', detail: string | null): void {
    op.outcome = outcome;
    op.completedAtMs = this.clock();
    op.detail = detail;
  }

  count(kind: OperationKind, outcome?: Operation['outcome']): number {
    return this.operations.filter((o) => o.kind === kind && (outcome === undefined || o.outcome === outcome)).length;
  }
}
