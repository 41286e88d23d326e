// The stock-in as a person reads it in a terminal: plain text, no colours, so a pipe or a log keeps it as it is.
import type { InvoiceStock, InvoiceStockState, Mapping, StockInState } from '../contracts/stock-in.js';
import { table } from './command.js';

const STATE_LABELS: Record<InvoiceStockState, string> = {
  added: 'added',
  waiting: 'waiting for a mapping',
  not_stock: 'not stock',
  before_start: 'before the start date',
  taken_back: 'taken back',
  not_confirmed: 'not confirmed',
};

const supplier = (inv: InvoiceStock) => `${inv.supplierName || '(no name)'} (${inv.supplierPin || 'no PIN'})`;
const branch = (inv: InvoiceStock) => inv.branch ?? '(first)';
const linesAdded = (inv: InvoiceStock) => inv.lines.filter((l) => l.added > 0).length;
const linesWaiting = (inv: InvoiceStock) => inv.lines.filter((l) => !l.match).length;

function byDate(a: InvoiceStock, b: InvoiceStock): number {
  return a.invoiceDate.localeCompare(b.invoiceDate) || a.supplierInvoiceNumber.localeCompare(b.supplierInvoiceNumber);
}

/** Invoices the stock-in has a say on (seen confirmed), and those of them no longer waiting for a mapping. */
export function settled(state: StockInState): { settled: number; total: number; waiting: number } {
  const total = state.invoices.filter((inv) => inv.state !== 'not_confirmed').length;
  const waiting = state.invoices.filter((inv) => inv.state === 'waiting').length;
  return { settled: total - waiting, total, waiting };
}

export function progressBar(state: StockInState, width = 30): string {
  const { settled: done, total, waiting } = settled(state);
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} invoices settled, ${waiting} waiting`;
}

function heading(state: StockInState): string {
  const { settings, totals, invoices } = state;
  const from =
    settings === null ? 'no settings yet' : `from ${settings.from}${settings.allOrNothing ? ', all-or-nothing' : ''}`;
  const by = totals.matchedBy;
  return (
    `stock-in of ${state.businessId} (${from}): ${invoices.length} invoice(s); lines ${totals.linesAdded} added, ` +
    `${totals.linesWaiting} waiting, ${totals.linesTakenBack} taken back; matched by merchant ${by.merchant}, ` +
    `learned ${by.learned}, name ${by.name}, operator ${by.operator}`
  );
}

/** What waits, line by line, with the command that maps it. */
function waitingLines(state: StockInState): string[] {
  const waiting = state.invoices.filter((inv) => inv.state === 'waiting').sort(byDate);
  if (waiting.length === 0) return [];
  const out = ['', 'Waiting for a mapping:'];
  for (const inv of waiting) {
    out.push(`  ${inv.purchaseId}: ${inv.supplierInvoiceNumber} of ${inv.invoiceDate} from ${supplier(inv)}`);
    for (const l of inv.lines.filter((line) => !line.match)) {
      const code = l.code ? ` (code ${l.code})` : '';
      const offered = (l.candidates ?? []).map((c) => `${c.itemId} (${c.name})`).join(', ');
      out.push(`    line ${l.line}: "${l.description}"${code}, ${l.quantity} × ${l.unitPrice}`);
      out.push(`      ${offered ? `maybe: ${offered}` : 'no item name resembles it'}`);
    }
  }
  out.push(
    '',
    `Map a line: npm run purchases -- map line ${state.businessId} <purchaseId> <line> ` +
      '(--item <itemId> [--factor N] | --not-stock)',
  );
  return out;
}

/** The heading, one row per invoice, then every waiting line with the items it may be. */
export function stockInReport(state: StockInState): string[] {
  const older = 'Invoices settled over an hour ago are in their purchases books (docs/stock-in.md).';
  if (state.invoices.length === 0)
    return [heading(state), 'No supplier invoice settled in the last hour, and none waits for a person.', older];
  const rows = [...state.invoices]
    .sort(byDate)
    .map((inv) => [
      inv.purchaseId,
      STATE_LABELS[inv.state],
      supplier(inv),
      inv.supplierInvoiceNumber,
      inv.invoiceDate,
      branch(inv),
      String(linesAdded(inv)),
      String(linesWaiting(inv)),
    ]);
  const header = ['PURCHASE', 'STATE', 'SUPPLIER', 'NUMBER', 'DATE', 'BRANCH', 'ADDED', 'WAITING'];
  return [heading(state), '', ...table([header, ...rows]), '', older, ...waitingLines(state)];
}

/** An answer of `map line` or `map correct`: the invoice as it stands now. */
export function invoiceReport(inv: InvoiceStock): string[] {
  const rows = inv.lines.map((l) => {
    const match = !l.match
      ? 'waiting'
      : 'notStock' in l.match
        ? 'not stock'
        : `${l.match.itemId} × ${l.match.factor} (${l.match.by})`;
    return [String(l.line), l.description, String(l.quantity), match, String(l.added)];
  });
  return [
    `${inv.purchaseId}: ${inv.supplierInvoiceNumber} of ${inv.invoiceDate} from ${supplier(inv)}, ` +
      `branch ${branch(inv)}: ${STATE_LABELS[inv.state]}`,
    ...table([['LINE', 'DESCRIPTION', 'QUANTITY', 'ITEM', 'ADDED'], ...rows]).map((line) => `  ${line}`),
  ];
}

export function mappingsReport(mappings: readonly Mapping[]): string[] {
  if (mappings.length === 0) return ['No mappings.'];
  const rows = [...mappings]
    .sort(
      (a, b) => a.supplierPin.localeCompare(b.supplierPin) || a.by.localeCompare(b.by) || a.key.localeCompare(b.key),
    )
    .map((m) => [
      m.supplierPin,
      m.by,
      m.key,
      'notStock' in m ? '(not stock)' : m.itemId,
      'notStock' in m ? '' : String(m.factor),
      m.source,
    ]);
  return [...table([['SUPPLIER', 'BY', 'KEY', 'ITEM', 'FACTOR', 'SOURCE'], ...rows]), `${mappings.length} mapping(s)`];
}
