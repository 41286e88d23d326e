/**
 * Outages of the tax authority or the compliance service, on the time-skipping server: the sale (or a refund's credit
 * note) waits them out by itself (days of them in milliseconds of wall time), shows it, answers a till at once, and is
 * signed once after.
 */
import { writeFile } from 'node:fs/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { AttentionReason, FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { outageNewsSignal } from '../../src/contracts/outage-watch.js';
import { awaitReceiptUpdate, retryUpdate, type FiscalDocument } from '../../src/contracts/sale.js';
import { DAY, HOUR, MINUTE, creditNoteDocument, saleDocument, submission, useLogicHarness } from './logic-harness.js';

const h = useLogicHarness();

const failed = (error: string) => saleDocument({ status: 'failed', error });
const unavailable = () =>
  submission.rejected(failed('The authority is unavailable'), [
    { code: 'authority_unavailable', message: 'The authority is unavailable' },
  ]);
const signed = (document: Partial<FiscalDocument> = {}) => submission.signed(saleDocument(document));
/** Each sale's document is `sal_<its invoice number>`: a resubmission names its sale. */
const documentOf = (tin: string) => ({ id: `sal_${tin}`, traderInvoiceNumber: tin });
const tinOf = (documentId: string) => documentId.slice('sal_'.length);
const refused = (tin: string) => ({ ...unavailable(), document: { ...unavailable().document, ...documentOf(tin) } });
/** Every first submission refused as the authority being unavailable. */
const refuseEveryFiling = async ({ request }: { request: { traderInvoiceNumber: string } }) =>
  refused(request.traderInvoiceNumber);
/** What the activity throws once the service answered 503: retryable, as every 5xx is. */
const serviceDown = () =>
  ApplicationFailure.create({ type: 'service_unavailable', message: 'createSale (POST /v1/sales): 503' });

describe('an authority outage', () => {
  it('is waited out for three days without a person, then the sale is signed once', { timeout: 300_000 }, async () => {
    let authorityBack = false;
    const retrySale = async ({ documentId }: { documentId: string }) =>
      authorityBack ? signed({ id: documentId }) : unavailable();
    await h.run({ createSale: async () => unavailable(), retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'waiting_out_outage');
      // A till asking hears at once why there is no receipt yet, instead of waiting its 30 s out. Asked while the
      // history is short: the test server hands an update to a worker without the sale cached, and replaying three
      // days of probes on a loaded machine outlasts a workflow task's timeout.
      const before = await s.env.currentTimeMs();
      const answer = await handle.executeUpdate(awaitReceiptUpdate, { args: [{ wait: '30 seconds' }] });
      expect(answer.signed).toBe(false);
      expect(answer.reason).toMatch(/^waiting out an outage of the tax authority since .* \(authority_unavailable\)/);
      expect((await s.env.currentTimeMs()) - before).toBeLessThan(30_000);
      await s.env.sleep(3 * DAY);

      const waiting = await s.waitFor(handle, (st) => st.step === 'waiting_out_outage');
      expect(waiting.parked).toBeNull();
      expect(waiting.outage).toMatchObject({ side: 'authority', cause: 'authority_unavailable' });
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('authority_unavailable');
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('awaiting_authority');
      // The application's watch probes by this sale: every 10 s growing to 20 s in the first hour, then less often,
      // up to every 15 minutes: three days cost about 500 tries, not one a second.
      const tries = s.inputs('retrySale').length;
      expect(tries).toBeGreaterThan(430);
      expect(tries).toBeLessThan(580);
      const times = s.calls.filter((c) => c.name === 'retrySale').map((c) => c.scheduledAtMs);
      const lastGap = times.at(-1)! - times.at(-2)!;
      expect(lastGap).toBeGreaterThanOrEqual(15 * MINUTE - 1000);
      expect(lastGap).toBeLessThanOrEqual(15 * MINUTE + 1000);

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
      const handle = await s.startSale(s.saleInput({ options: { outageLimit: '2 hours' } }));
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
      const handle = await s.startSale(s.saleInput());
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
    const retrySale = async ({ documentId }: { documentId: string }) => {
      const tin = tinOf(documentId);
      return authorityBack ? signed(documentOf(tin)) : refused(tin);
    };
    await h.run({ createSale: refuseEveryFiling, retrySale }, async (s) => {
      const handles = [];
      for (let i = 0; i < 5; i++) {
        handles.push(await s.startSale(s.saleInput()));
        await s.waitFor(handles[i]!, (st) => st.step === 'waiting_out_outage');
      }
      await s.env.sleep(10 * MINUTE);
      const down = s.calls.filter((c) => c.name === 'retrySale');
      // One probe at a time: 10 s after the first sale waits, then as far apart as the outage is old, up to 20 s;
      // never more than three in any 60 s (four allowed for the test server's timing).
      expect(down.length).toBeGreaterThan(15);
      expect(down.length).toBeLessThan(35);
      const times = down.map((c) => c.scheduledAtMs);
      for (const t of times) expect(times.filter((u) => u >= t && u < t + 60_000).length).toBeLessThanOrEqual(4);
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
        const handle = await s.startSale(s.saleInput());
        await s.env.sleep(6 * HOUR);
        const waiting = await s.waitFor(handle, (st) => st.step === 'waiting_out_outage');
        expect(waiting.outage).toMatchObject({ side: 'service', cause: 'service_unavailable' });
        expect(waiting.parked).toBeNull();
        expect(await s.searchAttribute(handle, FiscalStatus)).toBe('awaiting_service');
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);

        down = false;
        // Six hours into the outage the watch probes every 12 minutes (a 30th of its age): one probe comes in 13.
        await s.env.sleep(13 * MINUTE);
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

  it('a probe taken in flight stays the probe: once it is signed, every waiting sale goes at once', async () => {
    let authorityBack = false;
    // Back, the authority takes a resubmission in flight (202) and decides it a moment later.
    const retrySale = async ({ documentId }: { documentId: string }) => {
      const tin = tinOf(documentId);
      return authorityBack
        ? submission.inFlight(saleDocument({ ...documentOf(tin), status: 'pending', receipt: null }))
        : refused(tin);
    };
    await h.run({ createSale: refuseEveryFiling, retrySale }, async (s) => {
      const handles = [];
      for (let i = 0; i < 6; i++) {
        handles.push(await s.startSale(s.saleInput()));
        await s.waitFor(handles[i]!, (st) => st.step === 'waiting_out_outage');
      }
      await s.env.sleep(2 * MINUTE);
      authorityBack = true;
      const before = s.calls.filter((c) => c.name === 'retrySale').length;
      // One probe (at most 20 s away) and its outcome; left to probe one at a time, six would take two minutes.
      await s.env.sleep(40_000);
      for (const handle of handles) await s.waitFor(handle, (st) => st.step === 'completed');
      const after = s.calls.filter((c) => c.name === 'retrySale').slice(before);
      expect(after).toHaveLength(6);
      const spread = after.at(-1)!.scheduledAtMs - after[0]!.scheduledAtMs;
      expect(spread).toBeLessThan(15_000);
    });
  });

  it('a probe the watch sends with the others while its call is under way goes again at once when that call fails', async () => {
    let sale: WorkflowHandle | undefined;
    let tries = 0;
    const retrySale = async ({ documentId }: { documentId: string }) => {
      const tin = tinOf(documentId);
      tries++;
      if (tries > 1) return signed(documentOf(tin));
      // Another sale got through meanwhile: the watch sends every waiting sale, this probe too, before it answers.
      await sale!.signal(outageNewsSignal, { side: 'authority', news: 'over' });
      return refused(tin);
    };
    await h.run({ createSale: refuseEveryFiling, retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      sale = handle;
      await s.waitFor(handle, (st) => st.step === 'waiting_out_outage');
      await s.env.sleep(MINUTE);
      await s.waitFor(handle, (st) => st.step === 'completed');
      const [probe, after] = s.calls.filter((c) => c.name === 'retrySale');
      // Not left waiting for news the watch will not send (it let the sale go): the next try follows the failed one.
      expect(after!.scheduledAtMs - probe!.scheduledAtMs).toBeLessThan(5_000);
      const history = await handle.fetchHistory();
      if (process.env.RECORD_HISTORY_TO)
        await writeFile(
          process.env.RECORD_HISTORY_TO,
          `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`,
        );
    });
  });

  it('sends at once a sale that joins just after the others were sent: it was held back, not by the outage', async () => {
    let authorityBack = false;
    // Every first submission is refused, as a process that has not heard yet holds it back.
    const retrySale = async ({ documentId }: { documentId: string }) => {
      const tin = tinOf(documentId);
      return authorityBack ? signed(documentOf(tin)) : refused(tin);
    };
    await h.run({ createSale: refuseEveryFiling, retrySale }, async (s) => {
      const first = await s.startSale(s.saleInput());
      await s.waitFor(first, (st) => st.step === 'waiting_out_outage');
      authorityBack = true;
      await s.env.sleep(30_000);
      await s.waitFor(first, (st) => st.step === 'completed');

      const late = await s.startSale(s.saleInput());
      await s.env.sleep(5_000);
      await s.waitFor(late, (st) => st.step === 'completed');
      const tin = (await s.state(late)).traderInvoiceNumber;
      const at = (name: string) =>
        s.calls.find(
          (c) =>
            c.name === name &&
            JSON.stringify(c.input).includes(tin) &&
            (name === 'createSale' || (c.input as { documentId: string }).documentId === `sal_${tin}`),
        )!.scheduledAtMs;
      // Not the 10 s a first probe waits.
      expect(at('retrySale') - at('createSale')).toBeLessThan(5_000);
    });
  });

  it('a probe whose filing lists items to register tells the watch first: their registration waits for it', async () => {
    let down = true;
    const checkItems = async ({ itemIds }: { itemIds: string[] }) => {
      if (down) throw serviceDown();
      return { items: itemIds.map((itemId) => ({ itemId, registered: false, stockTracked: true, unitPrice: null })) };
    };
    await h.run({ checkItems }, async (s) => {
      const handles = [];
      for (let i = 0; i < 2; i++) {
        handles.push(await s.startSale(s.saleInput()));
        await s.waitFor(handles[i]!, (st) => st.step === 'waiting_out_outage');
      }
      down = false;
      await s.env.sleep(MINUTE);
      for (const handle of handles) await s.waitFor(handle, (st) => st.step === 'completed');
      let told = 0;
      for (const handle of handles) {
        const events = (await handle.fetchHistory()).events ?? [];
        const said = events.findIndex(
          (e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'outageTried',
        );
        const registering = events.findIndex(
          (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'requestItemRegistration',
        );
        expect(registering).toBeGreaterThan(0);
        if (said < 0) continue;
        told++;
        expect(said).toBeLessThan(registering);
      }
      // The probe told the watch; the other sale was sent by it.
      expect(told).toBe(1);
    });
  });
});

describe('an outage while a refund files its credit note', () => {
  it(
    'is waited out with nobody acting: the credit note is filed once the service answers, and the goods go back',
    { timeout: 120_000 },
    async () => {
      let down = true;
      let filed = 0;
      const createCreditNote = async ({ traderInvoiceNumber }: { traderInvoiceNumber: string }) => {
        if (down) throw serviceDown();
        filed++;
        return submission.signed(creditNoteDocument({ traderInvoiceNumber }));
      };
      await h.run({ createCreditNote }, async (s) => {
        const input = s.saleInput();
        await (await s.startSale(input)).result();
        const { handle, answer } = await s.refund(input.traderInvoiceNumber, {
          reason: '01',
          returnDate: '2026-11-22',
          traderInvoiceNumber: `CN-${Date.now()}`,
        });
        await s.waitForRefund(handle, (st) => st.step === 'waiting_out_outage', 20_000);
        await s.env.sleep(3 * HOUR);

        const waiting = await s.refundState(handle);
        expect(waiting.step).toBe('waiting_out_outage');
        expect(waiting.outage).toMatchObject({ side: 'service', cause: 'service_unavailable' });
        expect(waiting.parked).toBeNull();
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
        expect(await s.searchAttribute(handle, AttentionReason)).toBe('service_unavailable');
        expect(await s.searchAttribute(handle, FiscalStatus)).toBe('awaiting_service');
        // Probed by the application's watch: every 10 s growing to 20 s in the first hour, then a 30th of the outage's
        // age; not once a second (10,800 tries).
        const tries = s.inputs('createCreditNote').length;
        expect(tries).toBeGreaterThan(150);
        expect(tries).toBeLessThan(300);

        down = false;
        // Three hours into the outage the watch probes every 6 minutes (a 30th of its age): one probe comes in 7.
        await s.env.sleep(7 * MINUTE);
        const result = await answer;
        expect(result.creditNote.status).toBe('completed');
        expect(result.stockMovements.map((m) => [m.action, m.status])).toEqual([
          ['ADD', 'handed_over'],
          ['ADD', 'handed_over'],
        ]);
        expect(filed).toBe(1);
        const closed = await s.waitForRefund(handle, (st) => st.step === 'completed');
        expect(closed.outage).toBeNull();
        expect(closed.history.some((e) => e.event.startsWith('parked'))).toBe(false);
        expect(closed.history.map((e) => e.event)).toContainEqual(
          expect.stringMatching(/^service answered after \d+ tries$/),
        );
        expect(await s.searchAttribute(handle, FiscalStatus)).toBe('refunded');
        expect(await s.searchAttribute(handle, AttentionReason)).toBe('');
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      });
    },
  );
});
