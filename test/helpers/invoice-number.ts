import { randomUUID } from 'node:crypto';

let counter = 0;

/**
 * A trader invoice number no other test uses, in this run or an earlier one (test files share one Temporal
 * server and sale workflow ids derive from it), with an optional prefix that steers the demo authority
 * (ASYNC-, REJECT-, …: see DEMO.invoicePrefixes). At most 30 characters with the longest demo prefix.
 */
export function invoiceNumber(prefix = 'INV-'): string {
  return `${prefix}${Date.now().toString(36)}-${randomUUID().slice(0, 6)}-${(counter++).toString(36)}`;
}
