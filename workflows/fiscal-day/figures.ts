import type { FiscalDaySummary, TillClose, TillMatch, TillSales } from '../../src/contracts/fiscal-day.js';

const AMOUNTS = ['taxable', 'tax', 'total'] as const;

/** The till's close against the book: counts per label, amounts per letter to the cent, and the invoice numbers. */
export function compareTill(day: FiscalDaySummary, till: TillClose, sales: TillSales): TillMatch {
  const labels = [...new Set([...Object.keys(till.receipts), ...Object.keys(day.receipts)])].sort();
  const receipts = labels
    .map((label) => ({ label, till: till.receipts[label] ?? 0, authority: day.receipts[label] ?? 0 }))
    .filter((r) => r.till !== r.authority);
  const letters = [...new Set([...Object.keys(till.taxes), ...Object.keys(day.taxes)])].sort();
  const taxes = letters.flatMap((letter) =>
    AMOUNTS.flatMap((amount) => {
      const tillCents = Math.round((till.taxes[letter]?.[amount] ?? 0) * 100);
      const authorityCents = day.taxes[letter]?.[amount] ?? 0;
      if (tillCents === authorityCents) return [];
      return [{ letter, amount, till: tillCents / 100, authority: authorityCents / 100 }];
    }),
  );
  const matched = receipts.length === 0 && taxes.length === 0 && sales.notSignedCount + sales.notOnTillCount === 0;
  return { businessId: day.businessId, scuId: day.scuId, date: day.date, matched, receipts, taxes, ...sales };
}

const money = (cents: number) => (cents / 100).toFixed(2);

/** The Temporal UI's current details: the day's figures, and the last till close matched. */
export function dayTable(day: FiscalDaySummary, match: TillMatch | undefined): string {
  const lines = [
    `**Day** ${day.date} · control unit ${day.scuId} · ${day.status}` +
      (day.closedAt ? ` at ${day.closedAt}` : ` (closes ${day.closesAt})`) +
      (day.amendments > 0 ? ` · ${day.amendments} amendment(s)` : ''),
    `**Receipts** ${
      Object.entries(day.receipts)
        .map(([label, n]) => `${label} ${n}`)
        .join(' · ') || 'none yet'
    }`,
  ];
  for (const [series, n] of Object.entries(day.numbering))
    lines.push(
      `**Numbers** (${series}) ${n.first}–${n.last}` +
        (n.missing > 0 ? ` · **${n.missing} never seen**: ${n.gaps.map((g) => `${g.from}–${g.to}`).join(', ')}` : ''),
    );
  if (day.unnumbered > 0) lines.push(`**Unnumbered receipts** ${day.unnumbered}`);
  const letters = Object.keys(day.taxes).sort();
  if (letters.length > 0)
    lines.push(
      ['| letter | taxable | tax | total |', '|---|---:|---:|---:|']
        .concat(letters.map((l) => `| ${l} | ${AMOUNTS.map((a) => money(day.taxes[l]![a])).join(' | ')} |`))
        .join('\n'),
    );
  if (match)
    lines.push(
      match.matched
        ? '**Till close** matched'
        : `**Till close** differs: ${match.receipts.length} count(s), ${match.taxes.length} amount(s), ` +
            `${match.notSignedCount} not signed, ${match.notOnTillCount} not on the till`,
    );
  return lines.join('\n\n');
}
