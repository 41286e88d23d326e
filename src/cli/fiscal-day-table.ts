// The day as an accountant reads it: a table per control unit, or one CSV for a spreadsheet.
import { stringify } from 'csv-stringify/sync';
import type { FiscalDaySummary } from '../contracts/fiscal-day.js';

const money = (cents: number) => (cents / 100).toFixed(2);
const AMOUNTS = ['taxable', 'tax', 'total'] as const;

export function dayText(days: readonly FiscalDaySummary[]): string {
  if (days.length === 0) return 'no signed document on that day (or its book has ended and is no longer kept)\n';
  return days.map(oneDay).join('\n');
}

function oneDay(day: FiscalDaySummary): string {
  const out = [
    `${day.date}  control unit ${day.scuId}  business ${day.businessId}  ${day.status}` +
      (day.closedAt ? ` at ${day.closedAt}` : ` (closes ${day.closesAt})`) +
      (day.amendments > 0 ? `, ${day.amendments} amendment(s)` : ''),
    `  receipts: ${
      Object.entries(day.receipts)
        .map(([label, n]) => `${label} ${n}`)
        .join(', ') || 'none'
    }` + (day.unnumbered > 0 ? ` (${day.unnumbered} without a number)` : ''),
  ];
  for (const [series, n] of Object.entries(day.numbering)) {
    const gaps = n.gaps.map((g) => (g.from === g.to ? `${g.from}` : `${g.from}-${g.to}`)).join(', ');
    out.push(
      `  numbers (${series}): ${n.first} to ${n.last}` + (n.missing > 0 ? `; never seen: ${n.missing} (${gaps})` : ''),
    );
  }
  const rows = Object.keys(day.taxes)
    .sort()
    .map((letter) => [letter, ...AMOUNTS.map((a) => money(day.taxes[letter]![a]))]);
  const sum = (a: (typeof AMOUNTS)[number]) => Object.values(day.taxes).reduce((s, b) => s + b[a], 0);
  rows.push(['all', ...AMOUNTS.map((a) => money(sum(a)))]);
  const table = [['letter', 'taxable', 'tax', 'total'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const row of table)
    out.push('  ' + row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
  return `${out.join('\n')}\n`;
}

/** One row per control unit and tax letter; the day's counts repeat on each row so every row stands alone. */
export function dayCsv(days: readonly FiscalDaySummary[]): string {
  const header = ['date', 'business_id', 'scu_id', 'status', 'receipts_ns', 'receipts_nc', 'first', 'last', 'missing'];
  const rows = days.flatMap((day) => {
    const all = Object.values(day.numbering);
    const common = [
      day.date,
      day.businessId,
      day.scuId,
      day.status,
      day.receipts.NS ?? 0,
      day.receipts.NC ?? 0,
      all.length ? Math.min(...all.map((n) => n.first)) : '',
      all.length ? Math.max(...all.map((n) => n.last)) : '',
      all.reduce((s, n) => s + n.missing, 0),
    ];
    return Object.keys(day.taxes)
      .sort()
      .map((letter) => [...common, letter, ...AMOUNTS.map((a) => money(day.taxes[letter]![a]))]);
  });
  return stringify([[...header, 'tax_letter', 'taxable', 'tax', 'total'], ...rows]);
}
