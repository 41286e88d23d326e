import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Workflow code imports this module, so it must stay deterministic: only @temporalio/common, no Node APIs.

export const BusinessId = defineSearchAttributeKey('BusinessId', SearchAttributeType.KEYWORD);
export const TraderInvoiceNumber = defineSearchAttributeKey('TraderInvoiceNumber', SearchAttributeType.KEYWORD);
export const FiscalStatus = defineSearchAttributeKey('FiscalStatus', SearchAttributeType.KEYWORD);
export const CuInvoiceNumber = defineSearchAttributeKey('CuInvoiceNumber', SearchAttributeType.KEYWORD);
export const NeedsAttention = defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL);
/**
 * Why a workflow needs an operator, as a code the attention list can show as a column: a sale's parked reason's
 * code (`item_needs_fixing`, `outcome_timeout`, …) or failure's type, or a stock ledger's `stock_needs_operator`;
 * empty otherwise.
 */
export const AttentionReason = defineSearchAttributeKey('AttentionReason', SearchAttributeType.KEYWORD);

/**
 * The compliance application (the tenants file's name; `default` for a single-key worker) whose key and budget a
 * workflow's compliance calls use: written once the workflow has learned it (issue 16).
 */
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

/** Type names accepted by `temporal server start-dev --search-attribute NAME=TYPE`. */
type CliSearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface CliSearchAttribute {
  name: string;
  type: CliSearchAttributeType;
}

const cliTypeNames: Record<SearchAttributeType, CliSearchAttributeType> = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

export function toCliSearchAttributes(
  keys: readonly AnySearchAttributeKey[] = projectSearchAttributes,
): CliSearchAttribute[] {
  return keys.map((key) => ({ name: key.name, type: cliTypeNames[key.type] }));
}
