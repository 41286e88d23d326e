import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Workflow code imports this module, so it must stay deterministic: only @temporalio/common, no Node APIs.

export const BusinessId = defineSearchAttributeKey('BusinessId', SearchAttributeType.KEYWORD);
export const TraderInvoiceNumber = defineSearchAttributeKey('TraderInvoiceNumber', SearchAttributeType.KEYWORD);
export const FiscalStatus = defineSearchAttributeKey('FiscalStatus', SearchAttributeType.KEYWORD);
export const CuInvoiceNumber = defineSearchAttributeKey('CuInvoiceNumber', SearchAttributeType.KEYWORD);
export const NeedsAttention = defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL);
/** Why a workflow needs an operator: a parked reason's code, a failure's type or `stock_needs_operator`. */
export const AttentionReason = defineSearchAttributeKey('AttentionReason', SearchAttributeType.KEYWORD);

/** The compliance application (tenants file name) whose key and budget the workflow's calls use, once known. */
export const Application = defineSearchAttributeKey('Application', SearchAttributeType.KEYWORD);

// @temporalio/common does not re-export SearchAttributeKey from its entry point.
export type AnySearchAttributeKey = ReturnType<typeof defineSearchAttributeKey<SearchAttributeType>>;

export const projectSearchAttributes: readonly AnySearchAttributeKey[] = [
  BusinessId,
  TraderInvoiceNumber,
  FiscalStatus,
  CuInvoiceNumber,
  NeedsAttention,
  AttentionReason,
  Application,
];

/** `type` as `temporal server start-dev --search-attribute NAME=TYPE` takes it (`KEYWORD_LIST` → `KeywordList`). */
export interface CliSearchAttribute {
  name: string;
  type: string;
}

function cliTypeName(type: SearchAttributeType): string {
  return type
    .split('_')
    .map((word) => word.charAt(0) + word.slice(1).toLowerCase())
    .join('');
}

export function toCliSearchAttributes(
  keys: readonly AnySearchAttributeKey[] = projectSearchAttributes,
): CliSearchAttribute[] {
  return keys.map((key) => ({ name: key.name, type: cliTypeName(key.type) }));
}
