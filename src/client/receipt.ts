/**
 * What the sales client adds around the `awaitReceipt` update: the wait checked before anything is sent, the
 * workflow's `sale_input_conflict` refusal turned into the typed conflict error, and the answer of a sale that has
 * already closed (an update cannot reach it) built from its final state.
 */
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { isSigned } from '../contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../contracts/failures.js';
import type { ReceiptAnswer, SaleState } from '../contracts/sale.js';
import { SaleInputConflictError } from './errors.js';
import { parseAwaitReceiptRequest } from './schemas.js';

export interface AwaitReceiptOptions {
  /**
   * Longest wait for the signed receipt, as a duration ('30 seconds', '2m'); default '30 seconds', at most '10
   * minutes'.
   */
  wait?: string;
  /**
   * Update id to use instead of a fresh one. The same id again returns the first answer without waiting again, so a
   * caller that wants a newer answer leaves it unset.
   */
  updateId?: string;
}

/** `awaitReceipt`'s answer, with the sale it is about. */
export interface SaleReceiptAnswer extends ReceiptAnswer {
  workflowId: string;
}

/** The wait, checked as the workflow checks it: a `SaleInputError` naming `wait`, before anything is sent. */
export function parseWait(wait: unknown): string | undefined {
  return wait === undefined ? undefined : parseAwaitReceiptRequest({ wait }).wait;
}

/** The answer a closed sale would have given: signed or not, from its final state. */
export function answerFromState(state: SaleState): ReceiptAnswer {
  const signed = state.sale !== null && isSigned(state.sale);
  return { signed, receipt: signed ? state.sale!.receipt : null, state };
}

/**
 * The typed conflict when `err` is the workflow's refusal of an input that differs from the one the sale was
 * started with. The workflow names the fields in the failure's details (`{ fields: string[] }` or the list itself).
 */
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
