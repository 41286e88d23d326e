/**
 * Outages of the tax authority or the compliance service, on the time-skipping server: the sale waits them out by
 * itself (days of them in milliseconds of wall time), shows it, answers a till at once, and is signed once after.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AttentionReason, FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { awaitReceiptUpdate, retryUpdate, type FiscalDocument } from '../../src/contracts/sale.js';
import { DAY, HOUR, MINUTE, saleDocument, submission, useLogicHarness } from './logic-harness.js';

const h = useLogicHarness();

const failed = (error: string) => saleDocument({ status: 'failed', error });
const unavailable = () =>
  submission.rejected(failed('The authority is unavailable'), [
    { code: 'authority_unavailable', message: 'The authority is unavailable' },
  ]);
const signed = (document: Partial<FiscalDocument> = {}) => submission.signed(saleDocument(document));
/** What the activity throws once the service answered 503: retryable, as every 5xx is. */
const serviceDown = () =>
  ApplicationFailure.create({ type: 'service_unavailable', message: 'createSale (POST /v1/sales): 503' });

describe('an authority outage', () => {
  it('is waited out for three days without a person, then the sale is signed once', { timeout: 300_000 }, async () => {
    let authorityBack = false;
    const retrySale = async ({ documentId }: { documentId: string }) =>
      authorityBack ? signed({ id: documentId }) : unavailable();
    await h.run({ createSale: async () => unavailable(), retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { refundWindowDays: 0 } }));
      await s.env.sleep(3 * DAY);

      const waiting = await s.waitFor(handle, (st) => st.step === 'waiting_out_outage');
      expect(waiting.parked).toBeNull();
      expect(waiting.outage).toMatchObject({ side: 'authority', cause: 'authority_unavailable' });
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('authority_unavailable');
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('awaiting_authority');
      // The application's watch probes by this sale: every 4 s growing to 30 s in the first hour, then less often,
      // up to every 15 minutes: three days cost about 440 tries, not one a second.
      const tries = s.inputs('retrySale').length;
      expect(tries).toBeGreaterThan(380);
      expect(tries).toBeLessThan(500);
      const times = s.calls.filter((c) => c.name === 'retrySale').map((c) => c.scheduledAtMs);
      const lastGap = times.at(-1)! - times.at(-2)!;
      expect(lastGap).toBeGreaterThanOrEqual(15 * MINUTE - 1000);
      expect(lastGap).toBeLessThanOrEqual(15 * MINUTE + 1000);

      // A till asking now hears at once why there is no receipt yet, instead of waiting its 30 s out.
      const before = await s.env.currentTimeMs();
      const answer = await handle.executeUpdate(awaitReceiptUpdate, { args: [{ wait: '30 seconds' }] });
      expect(answer.signed).toBe(false);
      expect(answer.reason).toMatch(/^waiting out an outage of the tax authority since .* \(authority_unavailable\)/);
      expect((await s.env.currentTimeMs()) - before).toBeLessThan(30_000);

      authorityBack = true;
      await s.env.sleep(16 * MINUTE);
      const closed = await s.waitFor(handle, (st) => st.step === 'completed');
      expect(closed.outage).toBeNull();
      expect(closed.sale).toMatchObject({ status: 'completed' });
      expect(s.inputs('createSale')).toHaveLength(1);
      expect(closed.history.some((e) => e.event.startsWith('parked'))).toBe(false);
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('');
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('signed');
    });
  });

  it('parks once the outage outlasts the sale’s outageLimit, saying since when; a retry then signs', async () => {
    let authorityBack = false;
    const retrySale = async ({ documentId }: { documentId: string }) =>
      authorityBack ? signed({ id: documentId }) : unavailable();
    await h.run({ createSale: async () => unavailable(), retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { refundWindowDays: 0, outageLimit: '2 hours' } }));
      await s.env.sleep(3 * HOUR);
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked?.code).toBe('outage_limit_reached');
      expect(parked.parked?.message).toMatch(
        /^the tax authority has been failing since \S+ \(authority_unavailable: The authority is unavailable\); the sale waited 2 hours/,
      );
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('outage_limit_reached');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);
      const tries = s.inputs('retrySale').length;
      await s.env.sleep(DAY);
      expect(s.inputs('retrySale')).toHaveLength(tries);

      authorityBack = true;
      await handle.executeUpdate(retryUpdate);
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
    });
  });

  it('resubmits after a known-transient rejection without reading the items again (no item can fix it)', async () => {
    let calls = 0;
    const retrySale = async ({ documentId }: { documentId: string }) =>
      ++calls < 2 ? unavailable() : signed({ id: documentId });
    await h.run({ createSale: async () => unavailable(), retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { refundWindowDays: 0 } }));
      await s.env.sleep(MINUTE);
      const end = await s.waitFor(handle, (st) => st.step === 'completed');
      expect(end.submissions).toBe(3);
      expect(s.sequence().filter((n) => n === 'checkItems')).toHaveLength(1);
    });
  });

  it('keeps an explicit transientRetryLimit: parks after that many retries', async () => {
    await h.run({ createSale: async () => unavailable(), retrySale: async () => unavailable() }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { transientRetryLimit: 2 } }));
      await s.env.sleep(MINUTE);
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked?.message).toBe('The authority is unavailable (still failing after 2 automatic retries)');
      expect(parked.submissions).toBe(3);
    });
  });
});

describe('the application’s outage watch', () => {
  it('probes with one waiting sale at a time, and once one gets through sends every waiting sale, oldest first', async () => {
    let authorityBack = false;
    const document = (tin: string) => ({ id: `sal_${tin}`, traderInvoiceNumber: tin });
    const refused = (tin: string) => ({ ...unavailable(), document: { ...unavailable().document, ...document(tin) } });
    const createSale = async ({ request }: { request: { traderInvoiceNumber: string } }) =>
      refused(request.traderInvoiceNumber);
    const retrySale = async ({ documentId }: { documentId: string }) => {
      const tin = documentId.slice('sal_'.length);
      return authorityBack
        ? signed(document(tin))
        : { ...unavailable(), document: { ...unavailable().document, ...document(tin) } };
    };
    await h.run({ createSale, retrySale }, async (s) => {
      const handles = [];
      for (let i = 0; i < 5; i++) {
        handles.push(await s.startSale(s.saleInput({ options: { refundWindowDays: 0 } })));
        await s.waitFor(handles[i]!, (st) => st.step === 'waiting_out_outage');
      }
      await s.env.sleep(10 * MINUTE);
      const down = s.calls.filter((c) => c.name === 'retrySale');
      // One probe at a time: a few in the first minute, then one every 30 s; never more than six in any 60 s.
      expect(down.length).toBeGreaterThan(15);
      expect(down.length).toBeLessThan(35);
      const times = down.map((c) => c.scheduledAtMs);
      for (const t of times) expect(times.filter((u) => u >= t && u < t + 60_000).length).toBeLessThanOrEqual(6);
      // Probes go round the waiting sales.
      expect(new Set(down.map((c) => (c.input as { documentId: string }).documentId)).size).toBe(5);

      authorityBack = true;
      const before = down.length;
      await s.env.sleep(6 * MINUTE);
      for (const handle of handles) await s.waitFor(handle, (st) => st.step === 'completed');
      const after = s.calls.filter((c) => c.name === 'retrySale').slice(before);
      expect(after).toHaveLength(5);
      // The probe that got through first, then the others in the order their sales started.
      const sent = after.map((c) => (c.input as { documentId: string }).documentId);
      const started = await Promise.all(handles.map(async (h) => `sal_${(await s.state(h)).traderInvoiceNumber}`));
      expect(sent.slice(1)).toEqual(started.filter((id) => id !== sent[0]));
      for (const handle of handles)
        expect((await s.state(handle)).history.some((e) => e.event.startsWith('parked'))).toBe(false);
    });
  });
});

describe('a service outage', () => {
  it(
    'outlasting the old two-hour activity limit is waited out, and the sale is filed once it answers',
    { timeout: 120_000 },
    async () => {
      let down = true;
      let filed = 0;
      const createSale = async ({ request }: { request: { traderInvoiceNumber: string } }) => {
        if (down) throw serviceDown();
        filed++;
        return signed({ traderInvoiceNumber: request.traderInvoiceNumber });
      };
      await h.run({ createSale }, async (s) => {
        const handle = await s.startSale(s.saleInput({ options: { refundWindowDays: 0 } }));
        await s.env.sleep(6 * HOUR);
        const waiting = await s.waitFor(handle, (st) => st.step === 'waiting_out_outage');
        expect(waiting.outage).toMatchObject({ side: 'service', cause: 'service_unavailable' });
        expect(waiting.parked).toBeNull();
        expect(await s.searchAttribute(handle, FiscalStatus)).toBe('awaiting_service');
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);

        down = false;
        await s.env.sleep(6 * MINUTE);
        const closed = await s.waitFor(handle, (st) => st.step === 'completed');
        expect(filed).toBe(1);
        expect(closed.outage).toBeNull();
        expect(closed.history.some((e) => e.event.startsWith('parked'))).toBe(false);
        expect(closed.history.map((e) => e.event)).toContainEqual(
          expect.stringMatching(/^service answered after \d+ tries$/),
        );
      });
    },
  );

  it('a refusal after the outage still parks at once with the service’s reason', async () => {
    let calls = 0;
    const createSale = async () => {
      calls++;
      if (calls <= 4) throw serviceDown();
      throw ApplicationFailure.create({ type: 'forbidden', message: 'missing scope sales:write', nonRetryable: true });
    };
    await h.run({ createSale }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.env.sleep(MINUTE);
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked).toMatchObject({ code: 'forbidden', message: 'missing scope sales:write' });
      expect(parked.outage).toBeNull();
    });
  });
});
