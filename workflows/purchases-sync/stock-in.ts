/** What the sync tells the stock-in: each invoice that reaches `confirmed` or leaves it, once per change. */
import type { ListedPurchase } from '../../src/contracts/purchases-sync.js';
import type { SeenPurchase } from '../../src/contracts/stock-in.js';

/** The invoices of a page the stock-in has not been told in their status: confirmed now, or confirmed before. */
export function toTell(listed: readonly ListedPurchase[], told: Readonly<Record<string, string>>): SeenPurchase[] {
  return listed
    .map(({ purchase }) => purchase)
    .filter((p) => told[p.id] !== p.status && (p.status === 'confirmed' || told[p.id] === 'confirmed'))
    .map((p) => ({
      id: p.id,
      status: p.status,
      supplierPin: p.supplier.pin ?? '',
      supplierName: p.supplier.name ?? '',
      supplierInvoiceNumber: p.supplierInvoiceNumber,
      invoiceDate: p.invoiceDate,
      branch: p.branch,
      lines: p.lines.map((line) => {
        // The supplier's own code, where the service lists one (C69).
        const code = (line as { itemCode?: unknown }).itemCode;
        return {
          description: line.description,
          code: typeof code === 'string' && code.trim() !== '' ? code.trim() : null,
          hsCode: line.hsCode ?? null,
          quantity: line.quantity,
          unitPrice: line.unitPrice,
        };
      }),
    }));
}
