/**
 * The day books, checked as the rest is: each control unit's day summed here from the documents the sandbox signed
 * (never from workflow state), against the last summary the worker delivered for it (its close, or its latest
 * amendment). The run closes every day at the end through the `closeFiscalDay` update (a run never waits for
 * midnight), so each day's close is delivered and read back from the workers' sink files.
 */
import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import type { InspectedDocument } from '../../sandbox/inspector.js';

/** What the checker reads of a delivered day event: no import of the worker's types, only the documented fields. */
interface DeliveredDay {
  id: string;
  type: string;
  day: {
    businessId: string;
    scuId: string;
    date: string;
    receipts: Record<string, number>;
    taxes: Record<string, { taxable: number; tax: number; total: number }>;
    amendments: number;
  };
}

export interface DayVerdict {
  businessId: string;
  scuId: string;
  date: string;
  signed: Record<string, number>;
  /** Undefined: no summary of the day was delivered. */
  delivered: Record<string, number> | undefined;
  totalsEqual: boolean;
}

export interface DaysVerdict {
  days: number;
  equal: number;
  differing: DayVerdict[];
}

const keyOf = (businessId: string, scuId: string, date: string) => `${businessId}|${scuId}|${date}`;

/** `DD/MM/YYYY` as printed, to `YYYY-MM-DD`. */
function isoDate(scuDate: string | null): string {
  const m = scuDate ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(scuDate) : null;
  return m ? `${m[3]}-${m[2]}-${m[1]}` : '?';
}

/** The signed documents' days, each with its receipts by label and cents per tax letter. */
export function signedDays(documents: readonly InspectedDocument[]) {
  const days = new Map<
    string,
    {
      businessId: string;
      scuId: string;
      date: string;
      receipts: Record<string, number>;
      taxes: DeliveredDay['day']['taxes'];
    }
  >();
  for (const { sale } of documents) {
    const receipt = sale.receipt;
    if (sale.status !== 'completed' || !receipt?.scuId) continue;
    const date = isoDate(receipt.scuDate);
    const key = keyOf(sale.businessId, receipt.scuId, date);
    const day = days.get(key) ?? { businessId: sale.businessId, scuId: receipt.scuId, date, receipts: {}, taxes: {} };
    const label = receipt.receiptLabel ?? '?';
    day.receipts[label] = (day.receipts[label] ?? 0) + 1;
    for (const line of sale.lines) {
      const band = (day.taxes[line.taxTypeCode ?? '-'] ??= { taxable: 0, tax: 0, total: 0 });
      band.taxable += Math.round(line.taxableAmount * 100);
      band.tax += Math.round(line.taxAmount * 100);
      band.total += Math.round(line.total * 100);
    }
    days.set(key, day);
  }
  return days;
}

/** Closes each day's book (on the fleet's queue); a book already closed answers the same. */
export async function closeDays(
  client: Client,
  taskQueue: string,
  days: Iterable<{ businessId: string; scuId: string; date: string }>,
): Promise<void> {
  for (const { businessId, scuId, date } of days)
    await client.workflow
      .getHandle(`fiscal-day:${taskQueue}:${businessId}:${scuId}:${date}`)
      .executeUpdate('closeFiscalDay')
      .catch(() => undefined);
}

/** Every day event the sink files hold, the last of each day (the highest amendment) kept. */
export async function deliveredDays(files: readonly string[]): Promise<Map<string, DeliveredDay['day']>> {
  const last = new Map<string, DeliveredDay['day']>();
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (!line.includes('"fiscal_day.')) continue;
      const { day } = JSON.parse(line) as DeliveredDay;
      const key = keyOf(day.businessId, day.scuId, day.date);
      const before = last.get(key);
      if (!before || day.amendments >= before.amendments) last.set(key, day);
    }
  }
  return last;
}

export function daysVerdict(
  signed: ReturnType<typeof signedDays>,
  delivered: Map<string, DeliveredDay['day']>,
): DaysVerdict {
  const verdicts = [...signed.entries()].map(([key, day]): DayVerdict => {
    const got = delivered.get(key);
    const letters = new Set([...Object.keys(day.taxes), ...Object.keys(got?.taxes ?? {})]);
    const same =
      got !== undefined &&
      JSON.stringify(Object.entries(day.receipts).sort()) === JSON.stringify(Object.entries(got.receipts).sort()) &&
      [...letters].every((l) =>
        (['taxable', 'tax', 'total'] as const).every((k) => day.taxes[l]?.[k] === got.taxes[l]?.[k]),
      );
    return { ...day, signed: day.receipts, delivered: got?.receipts, totalsEqual: same };
  });
  return {
    days: verdicts.length,
    equal: verdicts.filter((v) => v.totalsEqual).length,
    differing: verdicts.filter((v) => !v.totalsEqual),
  };
}

export function daysText(v: DaysVerdict): string {
  const differing = v.differing
    .slice(0, 5)
    .map(
      (d) =>
        `${d.businessId} ${d.scuId} ${d.date}: signed ${JSON.stringify(d.signed)}, delivered ${JSON.stringify(d.delivered ?? null)}`,
    )
    .join('; ');
  return `[chaos] days: ${v.equal}/${v.days} delivered summaries equal the sandbox's sums${differing ? `; ${differing}` : ''}`;
}
