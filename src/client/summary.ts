/**
 * The static summary and details a sale carries in the Temporal UI, so an operator can read what was sold
 * without decoding the input payload. Customer contact details (phone, email) are left out on purpose.
 */
import type { SaleInput, SaleLineInput } from '../../workflows/definitions.js';

/** The server refuses a start whose user metadata is too large: stay well under its limits. */
export const SUMMARY_MAX_CHARS = 200;
export const DETAILS_MAX_CHARS = 12_000;

/** An amount in cents, rounded half up as the service rounds; float noise (1.005 * 100 = 100.4999…) removed first. */
function toCents(amount: number): number {
  return Math.round(Number((amount * 100).toPrecision(12)));
}

function lineTotalCents(line: SaleLineInput): number {
  return toCents(line.quantity * line.unitPrice);
}

export function saleTotalCents(input: SaleInput): number {
  return input.lines.reduce((sum, line) => sum + lineTotalCents(line), 0);
}

/** `1234567` → `12,345.67`. */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${whole}.${String(abs % 100).padStart(2, '0')}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One line: `Sale INV-1 · business biz_1 · 3 lines · total KES 1,250.00`. */
export function saleSummary(input: SaleInput): string {
  const lines = `${input.lines.length} line${input.lines.length === 1 ? '' : 's'}`;
  const line = `Sale ${input.traderInvoiceNumber} · business ${input.businessId} · ${lines} · total KES ${formatCents(saleTotalCents(input))}`;
  return truncate(line.replace(/\s+/g, ' '), SUMMARY_MAX_CHARS);
}

/** Markdown table cells: a '|' or a line break would end the cell or the row. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
}

/** A markdown header and a table of the lines; long sales list as many lines as fit, then say how many more. */
export function saleDetails(input: SaleInput): string {
  const facts = [
    `**Sale** ${cell(input.traderInvoiceNumber)} of **${cell(input.businessId)}**, dated ${input.saleDate}`,
    input.branchId !== undefined ? `branch ${cell(input.branchId)}` : undefined,
    input.paymentTypeCode !== undefined ? `payment type ${cell(input.paymentTypeCode)}` : undefined,
    input.customer?.name !== undefined ? `customer ${cell(input.customer.name)}` : undefined,
    input.customer?.pin !== undefined ? `customer PIN ${cell(input.customer.pin)}` : undefined,
  ].filter((fact): fact is string => fact !== undefined);

  const head = [
    facts.join(', '),
    '',
    '| # | Item | Description | Quantity | Unit price | Line total |',
    '|---:|---|---|---:|---:|---:|',
  ];
  const foot = ['', `**Total** KES ${formatCents(saleTotalCents(input))}`];

  const rows: string[] = [];
  let size = [...head, ...foot].join('\n').length;
  for (const [index, line] of input.lines.entries()) {
    const row = `| ${index + 1} | ${cell(line.itemId)} | ${cell(truncate(line.description ?? '', 80))} | ${line.quantity} | ${formatCents(toCents(line.unitPrice))} | ${formatCents(lineTotalCents(line))} |`;
    // Keep room for the "more lines" note.
    if (size + row.length + 1 > DETAILS_MAX_CHARS - 80) {
      rows.push('', `… and ${input.lines.length - index} more line(s) not shown here (see the workflow input).`);
      break;
    }
    rows.push(row);
    size += row.length + 1;
  }
  return [...head, ...rows, ...foot].join('\n');
}
