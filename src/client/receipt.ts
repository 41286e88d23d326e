import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { isSigned } from '../contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../contracts/failures.js';
import type { ReceiptAnswer, SaleState } from '../contracts/sale.js';
import { SaleInputConflictError } from './errors.js';
import { parseAwaitReceiptRequest } from './schemas.js';

export interface AwaitReceiptOptions {
  /** A duration ('30 seconds', '2m'); default '30 seconds', at most '10 minutes'. */
  wait?: string;
  /** The same id again returns the first answer without waiting again. */
  updateId?: string;
}

export interface SaleReceiptAnswer extends ReceiptAnswer {
  workflowId: string;
}

/** Checked as the workflow checks it, before anything is sent. */
export function parseWait(wait: unknown): string | undefined {
  return wait === undefined ? undefined : parseAwaitReceiptRequest({ wait }).wait;
}

export function answerFromState(state: SaleState): ReceiptAnswer {
  const signed = state.sale !== null && isSigned(state.sale);
  return { signed, receipt: signed ? state.sale!.receipt : null, state };
}

/** The workflow names the fields in the failure's details (`{ fields: string[] }` or the list itself). */
export function conflictOf(err: unknown, workflowId: string): SaleInputConflictError | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const failure = err.cause;
  if (!(failure instanceof ApplicationFailure) || failure.type !== FAILURE_TYPES.saleInputConflict) return undefined;
  return new SaleInputConflictError(workflowId, fieldsOf(failure.details?.[0]), { cause: err });
}

function fieldsOf(detail: unknown): string[] {
  const list =
    typeof detail === 'object' && detail !== null && 'fields' in detail
      ? (detail as { fields: unknown }).fields
      : detail;
  return Array.isArray(list) ? list.filter((field): field is string => typeof field === 'string') : [];
}
