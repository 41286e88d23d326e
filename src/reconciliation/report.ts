import { stringify } from 'csv-stringify/sync';
import type {
  Pairing,
  ReconcileBillPayment,
  ReconcilePurchase,
  ReconciliationResult,
} from '../contracts/reconciliation.js';

export interface ReportInput {
  businessId: string;
  companyId: string;
  result: ReconciliationResult;
  purchases: readonly ReconcilePurchase[];
  billPayments: readonly ReconcileBillPayment[];
}

/** The JSON key of the list a row is in. */
type RowCategory = Exclude<keyof ReconciliationResult['counts'], 'purchases' | 'billPayments' | 'ties'>;

function tieNotes(result: ReconciliationResult): Map<string, string> {
  const notes = new Map<string, string>();
  for (const tie of result.ties) {
    const [invoices, payments] = [tie.purchaseIds.join(', '), tie.billPaymentIds.join(', ')];
    const what =
      tie.reason === 'same_reference'
        ? `the reference of ${payments} fits invoices ${invoices}`
        : tie.purchaseIds.length === 1
          ? `payments ${payments} all fit ${invoices}`
          : tie.billPaymentIds.length === 1
            ? `${payments} fits invoices ${invoices}`
            : `invoices ${invoices} and payments ${payments} fit each other in more than one way`;
    const text = `tie: ${what}; decide by hand`;
    for (const id of [...tie.purchaseIds, ...tie.billPaymentIds])
      notes.set(id, notes.has(id) ? `${notes.get(id)}; ${text}` : text);
  }
  return notes;
}

/**
 * One row per invoice, then one per payment, each in the order the services listed them; only those in the result
 * (what was read outside the period is not).
 */
export function reportRows(input: ReportInput) {
  const { result } = input;
  const notes = tieNotes(result);
  const pairingOf = new Map<string, { category: RowCategory; pairing: Pairing }>();
  const paymentPairings = new Map<string, { category: RowCategory; purchaseIds: string[] }>();
  for (const category of ['matched', 'amountMismatches', 'suggested'] as const) {
    for (const pairing of result[category]) {
      pairingOf.set(pairing.purchaseId, { category, pairing });
      for (const paymentId of pairing.billPaymentIds) {
        const entry = paymentPairings.get(paymentId) ?? { category, purchaseIds: [] };
        entry.purchaseIds.push(pairing.purchaseId);
        paymentPairings.set(paymentId, entry);
      }
    }
  }
  const rejected = new Set(result.rejectedPurchases);
  const unpaid = new Set(result.unpaidPurchases);
  const unmatched = new Set(result.unmatchedPayments);
  const inResult = <T extends { id: string }>(records: readonly T[], listed: (id: string) => boolean): T[] => {
    const seen = new Set<string>();
    return records.filter((r) => listed(r.id) && !seen.has(r.id) && seen.add(r.id));
  };
  const purchases = inResult(input.purchases, (id) => pairingOf.has(id) || rejected.has(id) || unpaid.has(id));
  const purchaseRows = purchases.map((p) => {
    const paired = pairingOf.get(p.id);
    return {
      kind: 'purchase' as const,
      id: p.id,
      category: paired?.category ?? (rejected.has(p.id) ? 'rejectedPurchases' : 'unpaidPurchases'),
      counterpartIds: paired?.pairing.billPaymentIds ?? [],
      reference: p.supplierInvoiceNumber,
      supplier: p.supplier.name ?? '',
      date: p.invoiceDate,
      amount: p.totals.total,
      currency: '',
      paid: paired?.pairing.paid ?? null,
      difference: paired?.pairing.difference ?? null,
      ageDays: result.unpaidAgeDays[p.id] ?? null,
      review: [paired?.pairing.note, notes.get(p.id)].filter(Boolean).join('; '),
    };
  });
  const payments = inResult(input.billPayments, (id) => paymentPairings.has(id) || unmatched.has(id));
  const paymentRows = payments.map((b) => {
    const paired = paymentPairings.get(b.id);
    return {
      kind: 'billPayment' as const,
      id: b.id,
      category: paired?.category ?? 'unmatchedPayments',
      counterpartIds: paired?.purchaseIds ?? [],
      reference: b.billRef?.billCode ?? '',
      supplier: b.supplierRef?.name ?? '',
      date: b.date,
      amount: b.totalAmount,
      currency: b.currency,
      paid: null,
      difference: null,
      ageDays: null,
      review: notes.get(b.id) ?? '',
    };
  });
  return [...purchaseRows, ...paymentRows];
}

/** The rows' fields, in snake_case. */
const CSV_HEADER =
  'kind id category counterpart_ids reference supplier date amount currency paid difference age_days review';

/**
 * RFC 4180 with CRLF records. Supplier names and references come from outside: `escape_formulas` keeps a
 * spreadsheet from running them. Without `quote_record_delimiter`, a lone CR or LF in a field would go unquoted.
 */
export function toCsv(input: ReportInput): string {
  const rows = reportRows(input).map((row) => ({ ...row, counterpartIds: row.counterpartIds.join(' ') }));
  return stringify(rows, {
    header: true,
    columns: CSV_HEADER.split(' ').map((header) => ({
      header,
      key: header.replace(/_(.)/g, (_, c: string) => c.toUpperCase()),
    })),
    record_delimiter: '\r\n',
    quote_record_delimiter: true,
    escape_formulas: true,
  });
}

function table(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string>>): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: ReadonlyArray<string>) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

const money = (n: number | null) => (n === null ? '' : n.toFixed(2));

function countsLine(result: ReconciliationResult): string {
  const c = result.counts;
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  return [
    `${n(c.purchases, 'invoice', 'invoices')}, ${n(c.billPayments, 'bill payment', 'bill payments')}: ` +
      `${c.matched} matched`,
    `${c.suggested} suggested`,
    n(c.amountMismatches, 'amount mismatch', 'amount mismatches'),
    `${c.unpaidPurchases} unpaid`,
    `${c.rejectedPurchases} rejected`,
    `${n(c.unmatchedPayments, 'payment', 'payments')} without an invoice`,
    `${n(c.ties, 'tie', 'ties')} to review`,
  ].join(', ');
}

export function formatTable(input: ReportInput): string {
  const rows = reportRows(input);
  const { period, outsidePeriod } = input.result;
  const outside =
    outsidePeriod.purchases + outsidePeriod.billPayments > 0
      ? `; read but outside it: ${outsidePeriod.purchases} invoices, ${outsidePeriod.billPayments} bill payments`
      : '';
  const out = [
    `Reconciliation of business ${input.businessId} with accounting company ${input.companyId}, ` +
      `as of ${input.result.asOf}`,
    `Invoices dated ${period.from} to ${period.to} (${period.days} days); bill payments dated from ` +
      `${period.paymentsFrom}${outside}`,
    countsLine(input.result),
  ];
  const section = (title: string, headers: readonly string[], body: string[][]) => {
    if (body.length === 0) return;
    out.push('', `${title} (${body.length})`, ...table(headers, body));
  };
  const invoices = (category: RowCategory) => rows.filter((r) => r.kind === 'purchase' && r.category === category);
  const invoice = (r: (typeof rows)[number]) => [r.id, r.reference, r.supplier, r.date, money(r.amount)];
  const paired = (category: RowCategory) =>
    invoices(category).map((r) => [
      ...invoice(r),
      ...[money(r.paid), money(r.difference), r.counterpartIds.join(' '), r.review],
    ]);
  const invoiceHeaders = ['invoice', 'number', 'supplier', 'date', 'total'];
  const pairedHeaders = [...invoiceHeaders, 'paid', 'difference', 'bill payments', 'note'];
  section('Matched', pairedHeaders, paired('matched'));
  const suggested = 'Suggested: same supplier, amount and period, no reference; confirm before booking';
  section(suggested, pairedHeaders, paired('suggested'));
  section('Amount mismatches: the reference matches, the amounts do not', pairedHeaders, paired('amountMismatches'));
  section(
    'Unpaid invoices, oldest first',
    [...invoiceHeaders, 'age (days)', 'note'],
    invoices('unpaidPurchases')
      .sort((a, b) => (b.ageDays ?? -Infinity) - (a.ageDays ?? -Infinity))
      .map((r) => [...invoice(r), r.ageDays === null ? '?' : String(r.ageDays), r.review]),
  );
  section(
    'Payments without an invoice',
    ['bill payment', 'bill code', 'supplier', 'date', 'amount', 'currency', 'note'],
    rows
      .filter((r) => r.kind === 'billPayment' && r.category === 'unmatchedPayments')
      .map((r) => [...invoice(r), r.currency, r.review]),
  );
  section('Rejected invoices (not owed)', invoiceHeaders, invoices('rejectedPurchases').map(invoice));
  return `${out.join('\n')}\n`;
}
