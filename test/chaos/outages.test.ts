import { describe, expect, it } from 'vitest';
import {
  outageExposure,
  outageLine,
  outagesRidden,
  outagesText,
  saleKey,
  type RunOutage,
} from '../../tools/chaos/outages.js';

const service: RunOutage = {
  id: 'chaos-service-outage',
  kind: 'service',
  mode: 'unavailable',
  startsAtMs: 10_000,
  endsAtMs: 30_000,
  affected: 42,
};
const sale = (n: number, startedAtMs: number) => ({
  businessId: 'biz',
  traderInvoiceNumber: `INV-${n}`,
  startedAtMs,
});

describe('sales started during an outage', () => {
  it('counts only the sales started within [start, end), and when each was signed', () => {
    const started = [sale(1, 9_999), sale(2, 10_000), sale(3, 29_999), sale(4, 30_000), sale(5, 20_000)];
    const signed = new Map([
      [saleKey('biz', 'INV-1'), 10_500],
      [saleKey('biz', 'INV-2'), 31_000],
      [saleKey('biz', 'INV-3'), 42_500],
      [saleKey('biz', 'INV-4'), 30_100],
    ]);
    const [e] = outageExposure([service], started, signed);
    expect(e).toMatchObject({ salesStarted: 3, signedAfter: 2, signedDuring: 0, unsigned: 1 });
    expect(e!.lastSignedAfterSeconds).toBe(12.5);
    expect(outagesRidden([e!])).toBe(false);
  });

  it('holds when every one was signed after the end, and not when one was signed while it lasted', () => {
    const started = [sale(1, 12_000), sale(2, 15_000)];
    const after = outageExposure(
      [service],
      started,
      new Map([
        [saleKey('biz', 'INV-1'), 30_000],
        [saleKey('biz', 'INV-2'), 31_000],
      ]),
    );
    expect(outagesRidden(after)).toBe(true);
    const during = outageExposure(
      [service],
      started,
      new Map([
        [saleKey('biz', 'INV-1'), 29_000],
        [saleKey('biz', 'INV-2'), 31_000],
      ]),
    );
    expect(during[0]).toMatchObject({ signedDuring: 1, signedAfter: 1 });
    expect(outagesRidden(during)).toBe(false);
  });

  it('tells the same invoice number of two businesses apart', () => {
    const started = [sale(1, 12_000), { ...sale(1, 12_000), businessId: 'other' }];
    const [e] = outageExposure([service], started, new Map([[saleKey('other', 'INV-1'), 35_000]]));
    expect(e).toMatchObject({ salesStarted: 2, signedAfter: 1, unsigned: 1 });
  });

  it('says it in words', () => {
    const [e] = outageExposure([service], [sale(1, 12_000)], new Map([[saleKey('biz', 'INV-1'), 33_000]]));
    expect(outageLine(e!)).toBe(
      '[chaos] outage chaos-service-outage (service, unavailable) 10.0–30.0 s, 42 affected: 1 sales started during it, 1 signed after its end, the last 3.0 s after it, 0 signed during it, 0 unsigned',
    );
    expect(outagesText([e!, { ...e!, salesStarted: 2, signedAfter: 2 }])).toBe(
      '2 outages (3 sales started during them, 3 signed after their end)',
    );
  });
});
