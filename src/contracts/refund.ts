/** The refund process's contract: one workflow per signed sale, started by an update-with-start of `refund`. */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { z } from 'zod';
import type { RefundRequest, RefundResult, SaleState } from './sale.js';
import type { SaleSchemas } from './sale-input.js';

export const REFUND_WORKFLOW_TYPE = 'refundWorkflow';

export type RefundInput = z.output<SaleSchemas['refundInput']>;

/** The same request again answers with the same credit note; another request is refused. */
export const refundUpdate = defineUpdate<RefundResult, [RefundRequest]>('refund');
/** The refund's state: the signed sale it reverses, its credit note, where it is parked or waiting. */
export const getRefundStateQuery = defineQuery<SaleState>('getState');
export const getRefundInputQuery = defineQuery<RefundInput>('getInput');

/** Derived from the sale's id: a sale is credited once. */
export function refundWorkflowId(businessId: string, traderInvoiceNumber: string): string {
  return `refund:${businessId}:${traderInvoiceNumber}`;
}

/** What a refund reads of its sale when the sale's own record is gone: the default window, from the signed date. */
export const DEFAULT_REFUND_WINDOW_DAYS = 30;
