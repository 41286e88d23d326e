// Workflow code imports this module: only @temporalio/common, no Node APIs.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BusinessId = defineSearchAttributeKey('BusinessId', SearchAttributeType.KEYWORD);
export const TraderInvoiceNumber = defineSearchAttributeKey('TraderInvoiceNumber', SearchAttributeType.KEYWORD);
export const FiscalStatus = defineSearchAttributeKey('FiscalStatus', SearchAttributeType.KEYWORD);
export const CuInvoiceNumber = defineSearchAttributeKey('CuInvoiceNumber', SearchAttributeType.KEYWORD);
/** `YYYY-MM-DD/<scuId>` of a signed document (the receipt's day and control unit) and of that day's book. */
export const FiscalDay = defineSearchAttributeKey('FiscalDay', SearchAttributeType.KEYWORD);
export const NeedsAttention = defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL);
/** Why a workflow needs an operator: a parked reason's code, a failure's type or `stock_needs_operator`. */
export const AttentionReason = defineSearchAttributeKey('AttentionReason', SearchAttributeType.KEYWORD);

/** The compliance application whose key and budget the workflow's calls use, once known. */
export const Application = defineSearchAttributeKey('Application', SearchAttributeType.KEYWORD);

// @temporalio/common does not re-export SearchAttributeKey from its entry point.
export type AnySearchAttributeKey = ReturnType<typeof defineSearchAttributeKey<SearchAttributeType>>;

export const projectSearchAttributes: readonly AnySearchAttributeKey[] = [
  BusinessId,
  TraderInvoiceNumber,
  FiscalStatus,
  CuInvoiceNumber,
  FiscalDay,
  NeedsAttention,
  AttentionReason,
  Application,
];

/** `type` as `temporal server start-dev --search-attribute NAME=TYPE` takes it (`KEYWORD_LIST` → `KeywordList`). */
export interface CliSearchAttribute {
  name: string;
  type: string;
}

export function toCliSearchAttributes(keys = projectSearchAttributes): CliSearchAttribute[] {
  const words = (type: string) => type.split('_').map((word) => word.charAt(0) + word.slice(1).toLowerCase());
  return keys.map((key) => ({ name: key.name, type: words(key.type).join('') }));
}
