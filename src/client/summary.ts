// So an operator can read what was sold without decoding the input. Phone and email are left out on purpose.
import type { SaleInput, SaleLineInput } from '../contracts/sale.js';

/** Temporal's documented limits for a workflow's static summary and details (UTF-8 bytes). */
const SUMMARY_MAX_BYTES = 200;
const DETAILS_MAX_BYTES = 20_000;

/** An amount in cents, rounded half up as the service rounds; float noise (1.005 * 100 = 100.4999…) removed first. */
function toCents(amount: number): number {
  return Math.round(Number((amount * 100).toPrecision(12)));
}

const lineTotalCents = (line: SaleLineInput): number => toCents(line.quantity * line.unitPrice);
const saleTotal = (input: SaleInput): string =>
  formatCents(input.lines.reduce((sum, line) => sum + lineTotalCents(line), 0));

/** `1234567` → `12,345.67`. */
const MONEY = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const formatCents = (cents: number): string => MONEY.format(cents / 100);

/** A unit price as given when it has more than two decimals (fuel is sold at 182.345), else like money. */
function formatPrice(amount: number): string {
  const cents = toCents(amount);
  return Math.abs(cents / 100 - amount) < 1e-9 ? formatCents(cents) : String(amount);
}

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** At most `max` UTF-8 bytes, ending in '…' when cut (never in the middle of a character). */
function truncate(text: string, max: number): string {
  if (bytes(text) <= max) return text;
  let cut = '';
  for (const char of text) {
    if (bytes(cut) + bytes(char) + bytes('…') > max) break;
    cut += char;
  }
  return `${cut}…`;
}

/** One line: `Sale INV-1 · business biz_1 · 3 lines · total KES 1,250.00`. */
export function saleSummary(input: SaleInput): string {
  const lines = `${input.lines.length} line${input.lines.length === 1 ? '' : 's'}`;
  const line = [
    `Sale ${input.traderInvoiceNumber}`,
    `business ${input.businessId}`,
    lines,
    `total KES ${saleTotal(input)}`,
  ];
  return truncate(line.join(' · ').replace(/\s+/g, ' '), SUMMARY_MAX_BYTES);
}

/** Markdown table cells: a '|' or a line break would end the cell or the row. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
}

/** A markdown header and a table of the lines; long sales list as many lines as fit, then say how many more. */
export function saleDetails(input: SaleInput): string {
  const facts = [
    `**Sale** ${cell(input.traderInvoiceNumber)} of **${cell(truncate(input.businessId, 100))}**, ` +
      `dated ${input.saleDate}`,
    input.branchId !== undefined ? `branch ${cell(truncate(input.branchId, 100))}` : undefined,
    input.paymentTypeCode !== undefined ? `payment type ${cell(truncate(input.paymentTypeCode, 50))}` : undefined,
    input.customer?.name !== undefined ? `customer ${cell(truncate(input.customer.name, 100))}` : undefined,
    input.customer?.pin !== undefined ? `customer PIN ${cell(truncate(input.customer.pin, 50))}` : undefined,
  ].filter((fact): fact is string => fact !== undefined);

  const head = [
    facts.join(', '),
    '',
    '| # | Item | Description | Quantity | Unit price | Line total |',
    '|---:|---|---|---:|---:|---:|',
  ];
  const foot = ['', `**Total** KES ${saleTotal(input)}`];

  const rows: string[] = [];
  // Room for the "more lines" note, which needs at most ~100 bytes.
  const budget = DETAILS_MAX_BYTES - 100;
  let size = bytes([...head, ...foot].join('\n'));
  for (const [index, line] of input.lines.entries()) {
    const cells = [
      index + 1,
      cell(truncate(line.itemId, 60)),
      cell(truncate(line.description ?? '', 80)),
      line.quantity,
      formatPrice(line.unitPrice),
      formatCents(lineTotalCents(line)),
    ];
    const row = `| ${cells.join(' | ')} |`;
    if (size + bytes(row) + 1 > budget) {
      rows.push('', `… and ${input.lines.length - index} more line(s), not shown here (see the workflow input).`);
      break;
    }
    rows.push(row);
    size += bytes(row) + 1;
  }
  return [...head, ...rows, ...foot].join('\n');
}
