/**
 * The day book's workflow on the time-skipping test server: it closes by itself once its Nairobi day and grace are
 * over and delivers the close once; what comes late is delivered as numbered amendments; it ends after its keep-open
 * time; a till's close is compared to the cent. The real stack's path (signing, visibility, the sink) is in
 * fiscal-day.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FISCAL_DAY_SETTINGS,
  FISCAL_DAY_WORKFLOW_TYPE,
  dayEndMs,
  fiscalDayEntrySignal,
  getFiscalDayQuery,
  matchTillCloseUpdate,
  nairobiDate,
  taxBandsOf,
  type DayEntry,
  type FiscalDayEvent,
} from '../../src/contracts/fiscal-day.js';
import type { fiscalDayWorkflow } from '../../workflows/fiscal-day.js';
import { expectInvalidArgument, expectUpdateRefused } from '../helpers/updates.js';
import { HOUR, MINUTE, useProcessHarness, type ProcessScenario, type Stubs } from './process-logic-harness.js';

const h = useProcessHarness();

function entry(receiptNumber: number, label = 'NS'): DayEntry {
  return {
    documentId: `doc_${label}_${receiptNumber}`,
    traderInvoiceNumber: `INV-${receiptNumber}`,
    label,
    receiptNumber,
    cuInvoiceNo: `KRACU0100000001/${receiptNumber}`,
    taxes: taxBandsOf([{ taxTypeCode: 'B', taxableAmount: 86.21, taxAmount: 13.79, total: 100 }]),
  };
}

function stubs(delivered: FiscalDayEvent[]): Stubs {
  return {
    deliverFiscalDay: async ({ event }) => {
      delivered.push(event);
      return { delivered: true };
    },
    recoverFiscalDay: async () => ({ signed: 0, sent: 0 }),
    findTillSales: async () => ({
      notSigned: [],
      notOnTill: [],
      listedAtMost: 200,
      notSignedCount: 0,
      notOnTillCount: 0,
    }),
  };
}

async function startDay(s: ProcessScenario) {
  const date = nairobiDate(await s.env.currentTimeMs());
  const key = { businessId: `biz_${s.id}`, scuId: 'KRACU0100000001', date };
  const handle = await s.start<typeof fiscalDayWorkflow>(FISCAL_DAY_WORKFLOW_TYPE, `fiscal-day:${s.id}`, [
    { ...key, settings: { ...DEFAULT_FISCAL_DAY_SETTINGS, keepOpen: '1 hour' } },
  ]);
  const send = async (e: DayEntry) => handle.signal(fiscalDayEntrySignal, { ...key, entries: [e] });
  return { key, handle, send, closeMs: dayEndMs(date) + 30 * MINUTE };
}

describe('fiscalDayWorkflow', () => {
  it('closes after the day and its grace, delivers once, amends late documents, and ends after keeping open', async () => {
    const delivered: FiscalDayEvent[] = [];
    await h.run(stubs(delivered), async (s) => {
      const { handle, send, closeMs } = await startDay(s);
      for (const n of [1, 2, 2, 4]) await send(entry(n));
      await s.waitFor(
        () => handle.query(getFiscalDayQuery),
        (d) => d.receipts.NS === 3,
      );
      expect(delivered).toHaveLength(0);

      await s.env.sleep(closeMs - (await s.env.currentTimeMs()) + MINUTE);
      const closed = await s.waitFor(
        () => handle.query(getFiscalDayQuery),
        (d) => d.status === 'closed',
      );
      expect(Date.parse(closed.closedAt!)).toBeGreaterThanOrEqual(closeMs);
      expect(delivered.map((e) => e.type)).toEqual(['fiscal_day.closed']);
      expect(delivered[0]!.day.numbering.all).toMatchObject({ first: 1, last: 4, missing: 1 });
      expect(s.metrics.total('etims_fiscal_day_closes', { unaccounted: 'yes' })).toBe(1);

      // An outage's backlog, after the close: one amendment for what came together; a repeat adds nothing.
      await send(entry(3));
      await send(entry(3));
      await send(entry(5, 'NC'));
      await s.waitFor(
        () => handle.query(getFiscalDayQuery),
        (d) => d.receipts.NC === 1,
      );
      await s.env.sleep(2 * MINUTE);
      await s.waitFor(
        async () => delivered.length,
        (n) => n === 2,
      );
      expect(delivered[1]).toMatchObject({
        type: 'fiscal_day.amended',
        amendment: { number: 1, receipts: { NS: 1, NC: 1 } },
        day: { amendments: 1, receipts: { NS: 4, NC: 1 } },
      });
      expect(delivered[1]!.id).toMatch(/\.amended\.1$/);

      await s.env.sleep(2 * HOUR);
      const ended = await handle.result();
      expect(ended).toMatchObject({ status: 'closed', receipts: { NS: 4, NC: 1 }, amendments: 1 });
      expect(ended.taxes).toEqual({ B: { taxable: 43_105, tax: 6_895, total: 50_000 } });
      expect(ended.numbering.all).toMatchObject({ first: 1, last: 5, missing: 0 });
      expect(delivered).toHaveLength(2);
    });
  });

  it('counts at its close, and again before it ends, the sales whose entries were lost after their answers', async () => {
    const delivered: FiscalDayEvent[] = [];
    // The evidence (visibility and the sales' records), as the real activity sends it: the lost entries, as signals.
    const lost: DayEntry[] = [];
    const looks: number[] = [];
    let resend: (e: DayEntry) => Promise<void> = async () => undefined;
    const recoverFiscalDay: Stubs['recoverFiscalDay'] = async ({ counted }) => {
      looks.push(counted);
      const found = lost.splice(0);
      for (const e of found) await resend(e);
      return { signed: counted + found.length, sent: found.length };
    };
    await h.run({ ...stubs(delivered), recoverFiscalDay }, async (s) => {
      const { handle, send, closeMs } = await startDay(s);
      resend = send;
      for (const n of [1, 2]) await send(entry(n));
      lost.push(entry(3));
      await s.waitFor(
        () => handle.query(getFiscalDayQuery),
        (d) => d.receipts.NS === 2,
      );

      await s.env.sleep(closeMs - (await s.env.currentTimeMs()) + MINUTE);
      await s.waitFor(
        async () => delivered.length,
        (n) => n === 1,
      );
      // Counted before the close, so the summary delivered holds it: no amendment for what was signed on time.
      expect(delivered[0]).toMatchObject({ type: 'fiscal_day.closed', day: { receipts: { NS: 3 }, amendments: 0 } });
      expect(delivered[0]!.day.numbering.all).toMatchObject({ first: 1, last: 3, missing: 0 });

      lost.push(entry(4));
      await s.env.sleep(2 * HOUR);
      const ended = await handle.result();
      expect(ended).toMatchObject({ status: 'closed', receipts: { NS: 4 }, amendments: 1 });
      expect(delivered.map((e) => e.type)).toEqual(['fiscal_day.closed', 'fiscal_day.amended']);
      expect(delivered[1]).toMatchObject({ amendment: { number: 1, receipts: { NS: 1 } } });
      expect(looks).toEqual([2, 3]);
    });
  });

  it("answers a till's close with the counts and the amounts that differ, and refuses another day's or a bad one", async () => {
    await h.run(stubs([]), async (s) => {
      const { key, handle, send } = await startDay(s);
      await send(entry(1));
      await send(entry(2));
      await s.waitFor(
        () => handle.query(getFiscalDayQuery),
        (d) => d.receipts.NS === 2,
      );
      const taxes = { B: { taxable: 172.42, tax: 27.58, total: 200 } };
      const same = await handle.executeUpdate(matchTillCloseUpdate, { args: [{ ...key, receipts: { NS: 2 }, taxes }] });
      expect(same).toMatchObject({ matched: true, receipts: [], taxes: [] });

      const off = await handle.executeUpdate(matchTillCloseUpdate, {
        args: [
          {
            ...key,
            receipts: { NS: 3 },
            taxes: { B: { ...taxes.B, total: 200.01 }, A: { taxable: 5, tax: 0, total: 5 } },
          },
        ],
      });
      expect(off.matched).toBe(false);
      expect(off.receipts).toEqual([{ label: 'NS', till: 3, authority: 2 }]);
      expect(off.taxes).toEqual([
        { letter: 'A', amount: 'taxable', till: 5, authority: 0 },
        { letter: 'A', amount: 'total', till: 5, authority: 0 },
        { letter: 'B', amount: 'total', till: 200.01, authority: 200 },
      ]);
      expect(s.metrics.total('etims_fiscal_day_till_differences')).toBe(1);

      await expectUpdateRefused(
        handle.executeUpdate(matchTillCloseUpdate, { args: [{ ...key, date: '2020-01-01', receipts: {}, taxes: {} }] }),
        /day book of/,
      );
      await expectInvalidArgument(
        handle.executeUpdate(matchTillCloseUpdate, { args: [{ ...key, receipts: { NS: -1 }, taxes: {} } as never] }),
        /receipts\.NS/,
      );
    });
  });
});
