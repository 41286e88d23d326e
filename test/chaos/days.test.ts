/** The chaos checker's days: summed from the sandbox's documents alone, a delivered summary off by a cent is named. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InspectedDocument } from '../../sandbox/inspector.js';
import { daysVerdict, deliveredDays, signedDays } from '../../tools/chaos/days.js';

function document(label: 'NS' | 'NC', receiptNumber: number, total: number, status = 'completed'): InspectedDocument {
  const sign = label === 'NC' ? -1 : 1;
  return {
    sale: {
      businessId: 'biz',
      status,
      receipt: { scuId: 'SCU1', scuDate: '28/11/2026', receiptLabel: label, receiptNumber },
      lines: [
        { taxTypeCode: 'B', taxableAmount: sign * total * 0.862, taxAmount: sign * total * 0.138, total: sign * total },
      ],
    },
  } as unknown as InspectedDocument;
}

const day = (receipts: Record<string, number>, total: number, amendments = 0) => ({
  id: `fiscal_day.biz.SCU1.2026-11-28.${amendments === 0 ? 'closed' : `amended.${amendments}`}`,
  type: amendments === 0 ? 'fiscal_day.closed' : 'fiscal_day.amended',
  day: {
    businessId: 'biz',
    scuId: 'SCU1',
    date: '2026-11-28',
    receipts,
    taxes: { B: { taxable: Math.round(total * 86.2), tax: Math.round(total * 13.8), total: total * 100 } },
    amendments,
  },
});

describe('the chaos checker: days', () => {
  const signed = signedDays([
    document('NS', 1, 100),
    document('NS', 2, 50),
    document('NC', 3, 50),
    document('NS', 4, 9, 'failed'),
  ]);

  it('sums only signed documents, by control unit and day', () => {
    expect([...signed.values()]).toEqual([
      {
        businessId: 'biz',
        scuId: 'SCU1',
        date: '2026-11-28',
        receipts: { NS: 2, NC: 1 },
        taxes: { B: { taxable: 8620, tax: 1380, total: 10_000 } },
      },
    ]);
  });

  it('reads the latest summary of each day, and names a day delivered off by a cent or never delivered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chaos-days-'));
    const file = join(dir, 'events.ndjson');
    await writeFile(
      file,
      [day({ NS: 2 }, 150), day({ NS: 2, NC: 1 }, 100, 1)].map((e) => JSON.stringify(e)).join('\n'),
    );
    expect(daysVerdict(signed, await deliveredDays([file]))).toMatchObject({ days: 1, equal: 1, differing: [] });

    const off = day({ NS: 2, NC: 1 }, 100, 2);
    off.day.taxes.B.total += 1;
    await writeFile(file, [day({ NS: 2, NC: 1 }, 100, 1), off].map((e) => JSON.stringify(e)).join('\n'));
    expect(daysVerdict(signed, await deliveredDays([file]))).toMatchObject({ days: 1, equal: 0 });
    expect(daysVerdict(signed, await deliveredDays([join(dir, 'none.ndjson')]))).toMatchObject({
      equal: 0,
      differing: [{ delivered: undefined }],
    });
  });
});
