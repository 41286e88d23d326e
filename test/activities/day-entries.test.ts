/**
 * The gathering of day-book entries sent after the till's answer: one signal per book for what was signed together,
 * none larger than DAY_ENTRIES_PER_SIGNAL, every one awaited by a stopping worker. `send` here records what the real
 * `enterFiscalDay` would signal; fiscal-day.test.ts sends through the real one.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { dayEntriesGatherer } from '../../activities/day-entries.js';
import { DAY_ENTRIES_PER_SIGNAL, type FiscalDayEntries, type FiscalDayEntry } from '../../src/contracts/fiscal-day.js';

const day = (scuId: string, n: number): FiscalDayEntry => ({
  businessId: 'biz_a',
  scuId,
  date: '2026-11-28',
  entry: {
    documentId: `doc_${scuId}_${n}`,
    traderInvoiceNumber: `INV-${n}`,
    label: 'NS',
    receiptNumber: n,
    cuInvoiceNo: null,
    taxes: {},
  },
});

describe('day entries sent after the answer', () => {
  it('go to each book in one signal per moment, at most DAY_ENTRIES_PER_SIGNAL each, all sent before a stop', async () => {
    const sent: Array<FiscalDayEntries & { taskQueue: string }> = [];
    const afterAnswers = new Set<Promise<unknown>>();
    const enter = dayEntriesGatherer(async (input) => void sent.push(input), pino({ level: 'silent' }), afterAnswers);
    const count = DAY_ENTRIES_PER_SIGNAL + 5;
    const books = new Set<string>();
    for (let n = 1; n <= count; n++) books.add(enter('q', day('CU1', n)));
    books.add(enter('q', day('CU2', 1)));
    expect(books).toEqual(new Set(['fiscal-day:q:biz_a:CU1:2026-11-28', 'fiscal-day:q:biz_a:CU2:2026-11-28']));
    // Nothing sent in the till's moment.
    expect(sent).toHaveLength(0);
    expect(afterAnswers.size).toBe(3);

    await Promise.allSettled(afterAnswers);
    expect(afterAnswers.size).toBe(0);
    const cu1 = sent.filter((s) => s.scuId === 'CU1').map((s) => s.entries.length);
    expect(cu1).toEqual([DAY_ENTRIES_PER_SIGNAL, 5]);
    expect(sent.filter((s) => s.scuId === 'CU2').map((s) => s.entries.length)).toEqual([1]);
    const numbers = sent.flatMap((s) => (s.scuId === 'CU1' ? s.entries.map((e) => e.receiptNumber) : []));
    expect(numbers).toEqual(Array.from({ length: count }, (_, i) => i + 1));

    // A later sale opens the next gathering for its book.
    enter('q', day('CU1', count + 1));
    await Promise.allSettled(afterAnswers);
    expect(sent.at(-1)!.entries.map((e) => e.receiptNumber)).toEqual([count + 1]);
  });

  it('a send that fails is logged, not thrown: the day’s close finds those sales', async () => {
    const warned: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warned.push(JSON.parse(line)) });
    const afterAnswers = new Set<Promise<unknown>>();
    const enter = dayEntriesGatherer(
      async () => {
        throw new Error('Temporal is unreachable');
      },
      logger,
      afterAnswers,
    );
    enter('q', day('CU1', 1));
    await Promise.all(afterAnswers);
    expect(warned).toMatchObject([{ workflowId: 'fiscal-day:q:biz_a:CU1:2026-11-28', entries: 1 }]);
  });
});
