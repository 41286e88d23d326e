/**
 * What reaches a sale through its doors from callers other than the typed client: a plain-JSON start, Temporal's
 * own cancellation, the update forms of the Temporal UI (no data, wrong data, random update ids), a till's
 * `awaitReceipt`, and a service that words a rejection of an unregistered item its own way. On the time-skipping
 * test server with stub activities (logic-harness.ts); what needs the real service is in till.test.ts and recovery.test.ts.
 */
import { WorkflowFailedError, type WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { AttentionReason, FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { documentInFlight } from '../../activities/failures.js';
import {
  callbackReceivedSignal,
  cancelUpdate,
  getSaleInputQuery,
  itemRegistrationSettledSignal,
  retryUpdate,
  type AwaitReceiptRequest,
  type ReceiptAnswer,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { refusal, saleDocument, submission, useLogicHarness, type Scenario, type SaleHandle } from './logic-harness.js';
import { createStockLedgerActivities } from '../../activities/stock-ledger.js';
import { FIRST_BRANCH } from '../../src/contracts/stock-ledger.js';
import { eventually } from '../helpers/eventually.js';
import { expectRefusedAs } from '../helpers/updates.js';
import { terminateKeepingClock } from '../helpers/time-skipping.js';
import { pino } from 'pino';

const h = useLogicHarness();

const MILK = 'itm_milk_500ml';
const failed = (error = 'failed by the authority') => saleDocument({ status: 'failed', error });
const rejectedFor = (code: string, message: string) => submission.rejected(failed(message), [{ code, message }]);
const details = async (handle: SaleHandle) =>
  (await handle.query<{ currentDetails?: string | null }>('__temporal_workflow_metadata')).currentDetails ?? '';

/** The run's end (its result, or the error it failed with), or a failure after `ms`: a workflow task failing for ever never ends. */
async function endWithin(handle: SaleHandle, ms = 15_000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the sale did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([
      handle.result().then(
        (r) => r,
        (err: unknown) => err,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The till's call (the definition's optional argument does not fit the client's typed overloads). */
const awaitReceipt = (handle: SaleHandle, request: AwaitReceiptRequest) =>
  handle.executeUpdate<ReceiptAnswer, [AwaitReceiptRequest]>('awaitReceipt', { args: [request] });

/** Updates the server accepted into history: a validator's refusal leaves none. */
async function acceptedUpdates(handle: SaleHandle): Promise<string[]> {
  return ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
    e.workflowExecutionUpdateAcceptedEventAttributes
      ? [e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? '']
      : [],
  );
}

/**
 * The sale's own hand-over to the branch's stock ledger, held until `release()`: the signing activity's hand-over
 * fails, so the sale hands over itself with its local activity, whose workflow task stays open meanwhile.
 */
function heldHandOver() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handOver = createStockLedgerActivities({
    temporal: { client: h.env.client },
    logger: pino({ level: 'silent' }),
    canonicalBranch: async (_businessId, named) => named ?? FIRST_BRANCH,
  }).handOverStock;
  let handOvers = 0;
  const handOverStock = async (input: Parameters<typeof handOver>[0]) => {
    handOvers++;
    if (handOvers === 1) throw new Error('Temporal cannot be reached');
    // Only the sale's own hand-over waits: a refund's restock goes at once.
    if (handOvers === 2) await released;
    return handOver(input);
  };
  return {
    handOverStock,
    release: () => release(),
    underWay: (s: Scenario) =>
      eventually(
        () => s.sequence(),
        (seq) => seq.filter((name) => name === 'handOverStock').length === 2,
        { intervalMs: 20, what: 'the sale’s own hand-over under way' },
      ),
  };
}

const parkingRejection = { createSale: async () => rejectedFor('authority_rejected', 'The customer PIN is invalid') };

describe('a start the workflow cannot use (plain JSON from the Temporal CLI or another SDK)', () => {
  it('ends a sale without lines at once: non-retryable invalid_input naming the field, nothing sent, search attributes true', async () => {
    await h.run({}, async (s) => {
      const { lines: _lines, ...withoutLines } = s.saleInput();
      const handle = await s.startSale(withoutLines as SaleInput);
      const end = await endWithin(handle);
      expect(end).toBeInstanceOf(WorkflowFailedError);
      const cause = (end as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause.type).toBe(FAILURE_TYPES.invalidInput);
      expect(cause.nonRetryable).toBe(true);
      expect(cause.message).toMatch(/lines is required/);
      expect(cause.details?.[0]).toEqual([{ field: 'lines', reason: 'is required' }]);
      expect(s.calls).toEqual([]);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('invalid_input');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('invalid_input');
    });
  });

  it('ends a sale whose line amount overflows, and one that is not even an object, the same way', async () => {
    await h.run({}, async (s) => {
      const handle = await s.startSale(
        s.saleInput({
          lines: [{ itemId: MILK, quantity: 1_000_000, unitPrice: 1_000_000_000 }],
        }),
      );
      const end = await endWithin(handle);
      expect(end).toBeInstanceOf(WorkflowFailedError);
      const cause = (end as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.type).toBe(FAILURE_TYPES.invalidInput);
      expect(cause.message).toContain('lines[0]');
      expect(s.calls).toEqual([]);

      const notAnObject = await h.env.client.workflow.start('saleWorkflow', {
        taskQueue: s.taskQueue,
        workflowId: `sale:${s.businessId}:not-an-object`,
        args: ['INV-1'],
      });
      const end2 = await endWithin(notAnObject as SaleHandle);
      expect(((end2 as WorkflowFailedError).cause as ApplicationFailure).type).toBe(FAILURE_TYPES.invalidInput);
    });
  });
});

describe("Temporal's own cancellation (the UI's Request Cancellation, temporal workflow cancel)", () => {
  it('ends a parked, unsigned sale cancelled, as the cancel update does, with search attributes that tell the truth', async () => {
    await h.run(parkingRejection, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'parked');
      await handle.cancel();
      const end = await endWithin(handle);
      expect(end).toMatchObject({ step: 'cancelled', parked: null });
      expect((end as SaleState).history.at(-1)?.event).toMatch(/^cancelled: cancellation requested through Temporal/);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('cancelled');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('');
      expect(s.inputs('adjustStock')).toEqual([]);
    });
  });

  // The sale's hand-over is a local activity: the cancellation reaches it with its workflow task's heartbeat (seconds).
  it(
    'refuses it once the sale is signed, while its stock is handed over (a credit note reverses a signed sale): noted, shown, and the sale closes',
    { timeout: 60_000 },
    async () => {
      const held = heldHandOver();
      await h.run({ handOverStock: held.handOverStock }, async (s) => {
        try {
          const handle = await s.startSale(s.saleInput());
          await held.underWay(s);
          await handle.cancel();
          const noted = await s.waitFor(
            handle,
            (st) => st.history.some((e) => e.event.startsWith('cancellation refused')),
            25_000,
          );
          expect(noted.step).toBe('reporting_stock');
          expect(noted.history.at(-1)?.event).toMatch(/signed.*refund/);
          expect(await details(handle)).toMatch(/Cancellation refused/);
          held.release();
          const end = (await endWithin(handle)) as SaleState;
          expect(end.step).toBe('completed');
          expect(end.stockMovements.map((m) => m.status)).toEqual(['handed_over', 'handed_over']);
          expect((await handle.describe()).status.name).toBe('COMPLETED');
          expect(await s.searchAttribute(handle, FiscalStatus)).toBe('signed');
        } finally {
          held.release();
        }
      });
    },
  );

  it('refuses it while a document is in flight, and the sale still signs', async () => {
    let reads = 0;
    await h.run(
      {
        createSale: async () => submission.inFlight(saleDocument({ status: 'pending' })),
        awaitDocumentOutcome: async ({ documentId }) => {
          reads++;
          if (reads < 3)
            throw ApplicationFailure.create({ type: FAILURE_TYPES.documentInFlight, message: 'still in flight' });
          return { document: saleDocument({ id: documentId }) };
        },
      },
      async (s) => {
        const handle = await s.startSale(s.saleInput());
        await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
        await handle.cancel();
        await s.waitFor(handle, (st) => st.history.some((e) => e.event.startsWith('cancellation refused')));
        const end = await endWithin(handle, 20_000);
        expect(end).toMatchObject({ step: 'completed', sale: { status: 'completed' } });
        expect(await s.searchAttribute(handle, FiscalStatus)).toBe('signed');
      },
    );
  });
});

describe('operator update forms in the Temporal UI', () => {
  it('refuses every update sent with no data or wrong data in its validator, with a message naming what it needs', async () => {
    await h.run(parkingRejection, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'parked');
      const invalid = FAILURE_TYPES.invalidInput;
      await expectRefusedAs(
        handle.executeUpdate('cancel'),
        invalid,
        /^cancel needs \{"reason": "…"\}: no data was given/,
      );
      await expectRefusedAs(
        handle.executeUpdate('cancel', { args: [{ reason: 5 }] }),
        invalid,
        /^cancel needs \{"reason": "…"\}: reason must be a string/,
      );
      await expectRefusedAs(
        handle.executeUpdate('cancel', { args: [{ reason: '  ' }] }),
        invalid,
        /reason must not be empty/,
      );
      await expectRefusedAs(handle.executeUpdate('retry', { args: [{ now: true }] }), invalid, /^retry takes no data/);
      await expectRefusedAs(
        handle.executeUpdate('itemFixed'),
        invalid,
        /^itemFixed needs \{"itemId": "…"\}: no data was given/,
      );
      await expectRefusedAs(
        handle.executeUpdate('awaitReceipt', { args: [{ wait: 'forever' }] }),
        invalid,
        /^awaitReceipt .*wait must be a duration/,
      );
      expect(await acceptedUpdates(handle)).toEqual([]);
      // The retry form may send nothing at all, or an empty object: both are a retry.
      const after = await handle.executeUpdate('retry', { args: [{}] });
      expect(after).toMatchObject({ parked: null });
    });
  });

  it('answers cancel with the state after it acted, and a repeated cancel (another update id) with the same state, cancelling once', async () => {
    await h.run(parkingRejection, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'parked');
      const [first, second] = await Promise.all([
        handle.executeUpdate(cancelUpdate, { args: [{ reason: 'customer walked away' }], updateId: 'ui-1' }),
        handle.executeUpdate(cancelUpdate, { args: [{ reason: 'customer walked away' }], updateId: 'ui-2' }),
      ]);
      expect(first).toMatchObject({ step: 'cancelled', parked: null });
      expect(second).toMatchObject({ step: 'cancelled', parked: null });
      const end = (await endWithin(handle)) as SaleState;
      expect(end.history.filter((e) => e.event.startsWith('cancelled')).length).toBe(1);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('cancelled');
    });
  });

  it('answers retry with the state after it acted: unparked and moving on; a repeated retry never resubmits twice', async () => {
    let fixed = false;
    await h.run(
      {
        ...parkingRejection,
        retrySale: async ({ documentId }) =>
          fixed
            ? submission.signed(saleDocument({ id: documentId }))
            : rejectedFor('authority_rejected', 'The customer PIN is invalid'),
      },
      async (s) => {
        const handle = await s.startSale(s.saleInput());
        await s.waitFor(handle, (st) => st.step === 'parked');
        const after = await handle.executeUpdate(retryUpdate);
        expect(after.parked).toBeNull();
        expect(after.step).not.toBe('parked');
        expect(after.history.at(-1)?.event).toBe('operator asked for a retry');

        await s.waitFor(handle, (st) => st.step === 'parked' && st.submissions === 2);
        fixed = true;
        const answers = await Promise.allSettled([
          handle.executeUpdate(retryUpdate, { updateId: 'ui-a' }),
          handle.executeUpdate(retryUpdate, { updateId: 'ui-b' }),
        ]);
        for (const answer of answers) {
          if (answer.status === 'fulfilled') expect(answer.value.parked).toBeNull();
          else
            expect(String((answer.reason as WorkflowUpdateFailedError).cause?.message)).toMatch(
              /retry is possible only while the sale is parked/,
            );
        }
        const end = (await endWithin(handle)) as SaleState;
        expect(end.step).toBe('completed');
        expect(s.inputs('retrySale')).toHaveLength(2);
      },
    );
  });
});

describe('awaitReceipt, the till’s one call', () => {
  it('answers the receipt values of a sale once it signs, the same to a repeated call with the same input, and refuses another input naming the fields', async () => {
    const inFlight = {
      createSale: async () => submission.inFlight(saleDocument({ status: 'pending' })),
      awaitDocumentOutcome: async ({ documentId }: { documentId: string }) => {
        throw documentInFlight(documentId, 'pending');
      },
    };
    await h.run(inFlight, async (s) => {
      const input = s.saleInput();
      const handle = await s.startSale(input);
      await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      // A till that times out asks again: every call waits for the same receipt (a closed sale's is the client's).
      const first = awaitReceipt(handle, { input, wait: '1 minute' });
      const again = awaitReceipt(handle, { input, wait: '1 minute' });
      const bare = handle.executeUpdate<ReceiptAnswer, []>('awaitReceipt');
      await eventually(
        () => acceptedUpdates(handle),
        (names) => names.length === 3,
        { intervalMs: 20, what: 'the three calls waiting' },
      );

      const other = {
        ...input,
        lines: [{ ...input.lines[0]!, quantity: 3 }, input.lines[1]!],
        customer: { name: 'Wanjiru' },
      };
      const conflict = await expectRefusedAs(
        awaitReceipt(handle, { input: other }),
        FAILURE_TYPES.saleInputConflict,
        /lines\[0\]\.quantity/,
      );
      expect(conflict.message).toContain('customer.name');
      expect(conflict.message).not.toContain('Wanjiru');
      expect(conflict.details?.[0]).toEqual({ fields: ['customer.name', 'lines[0].quantity'] });
      expect(await acceptedUpdates(handle)).toHaveLength(3);

      // The authority signs it; the callback's hint has the sale read, and every waiting call answered.
      await handle.signal(callbackReceivedSignal, {
        documentId: 'sal_1',
        event: 'sale.completed',
        callbackId: 'cbk_1',
      });
      const answer = await first;
      expect(answer.signed).toBe(true);
      expect(answer.receipt).toMatchObject({ cuInvoiceNo: 'KRACU0100000001/1', signature: 'V3ZP-5XJH-2T6K-QJ4N' });
      expect(answer.state.sale?.status).toBe('completed');
      expect((await again).receipt).toEqual(answer.receipt);
      expect(await bare).toMatchObject({ signed: true, receipt: answer.receipt });
      expect(s.inputs('createSale')).toHaveLength(1);
      expect((await endWithin(handle)) as SaleState).toMatchObject({ step: 'completed' });
      expect(await handle.query(getSaleInputQuery)).toEqual(input);
    });
  });

  it('answers signed: false with the parked reason for a parked sale, and the in-flight state when the wait runs out', async () => {
    await h.run(parkingRejection, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const answer = await awaitReceipt(handle, { wait: '1 minute' });
      expect(answer).toMatchObject({
        signed: false,
        receipt: null,
        state: { step: 'parked', parked: { code: 'authority_rejected' } },
      });
    });
    await h.run(
      {
        createSale: async () => submission.inFlight(saleDocument({ status: 'pending' })),
        awaitDocumentOutcome: async () => {
          throw ApplicationFailure.create({ type: FAILURE_TYPES.documentInFlight, message: 'still in flight' });
        },
      },
      async (s) => {
        const handle = await s.startSale(s.saleInput());
        const answer = await awaitReceipt(handle, { wait: '1 second' });
        expect(answer).toMatchObject({
          signed: false,
          receipt: null,
          state: { step: 'awaiting_outcome', parked: null },
        });
      },
    );
  });
});

describe('AttentionReason, the attention list’s column', () => {
  it('is the parked code while parked and empty once nothing is needed; a movement waiting for an operator is the stock ledger’s (stock_needs_operator), not the sale’s (the failure type once failed: sale-logic.test.ts)', async () => {
    let fixed = false;
    await h.run(
      {
        ...parkingRejection,
        retrySale: async ({ documentId }) =>
          fixed ? submission.signed(saleDocument({ id: documentId })) : rejectedFor('authority_rejected', 'no'),
        // The ledger's probe reads a quantity; the movement itself is refused: an operator must settle it.
        adjustStock: async (movement) => {
          if (movement.quantity === 0) return { movementId: 'mov_probe', quantityOnHand: 100 };
          throw refusal(FAILURE_TYPES.invalidRequest, 'quantity must be positive');
        },
      },
      async (s) => {
        const handle = await s.startSale(s.saleInput({ lines: [{ itemId: MILK, quantity: 1, unitPrice: 65 }] }));
        await s.waitFor(handle, (st) => st.step === 'parked');
        expect(await s.searchAttribute(handle, AttentionReason)).toBe('authority_rejected');
        fixed = true;
        await handle.executeUpdate(retryUpdate);
        const closed = await s.settled(handle);
        expect(closed.stockMovements.map((m) => m.status)).toEqual(['handed_over']);
        await eventually(
          () => s.ledgerState().catch(() => undefined),
          (st) => st?.open.some((m) => m.status === 'needs_operator') ?? false,
          { timeoutMs: 20_000, intervalMs: 50, what: 'the ledger asking an operator' },
        );
        expect(await s.searchAttribute(s.ledger(), AttentionReason)).toBe('stock_needs_operator');
        expect(await s.searchAttribute(s.ledger(), NeedsAttention)).toBe(true);
        expect(await s.searchAttribute(handle, AttentionReason)).toBe('');
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
        // Left waiting, the ledger would be the next thing due (its 10-year execution timeout) when a later test skips time.
        await terminateKeepingClock(s.env, s.ledger());
      },
    );
    await h.run({}, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await handle.result();
      // Never written: nothing was ever needed (a client's start sets NeedsAttention false; a sale writes only changes).
      expect(await s.searchAttribute(handle, NeedsAttention)).toBeUndefined();
      expect(await s.searchAttribute(handle, AttentionReason)).toBeUndefined();
    });
  });
});

describe('recovery after a rejection rests on the service’s item list, not on a cause code', () => {
  const registersAtOnce = async ({ itemId, waiterWorkflowId }: { itemId: string; waiterWorkflowId: string }) => {
    await h.env.client.workflow
      .getHandle(waiterWorkflowId)
      .signal(itemRegistrationSettledSignal, { itemId, status: 'registered' });
  };

  it('registers an item the service lists as not registered after a rejection under any code, then resubmits once', async () => {
    let reads = 0;
    const checkItems = async ({ itemIds }: { itemIds: string[] }) => {
      reads++;
      // The first read (before filing) came from a stale cache; the read after the rejection is the service's.
      return {
        items: itemIds.map((itemId) => ({
          itemId,
          registered: reads === 1 || itemId !== MILK,
          stockTracked: true,
          unitPrice: null,
        })),
      };
    };
    await h.run(
      {
        checkItems,
        createSale: async () => rejectedFor('not_on_register', 'Unknown article'),
        requestItemRegistration: registersAtOnce,
      },
      async (s) => {
        const handle = await s.startSale(s.saleInput());
        const end = (await endWithin(handle)) as SaleState;
        expect(end.step).toBe('completed');
        expect(end.submissions).toBe(2);
        expect(s.sequence()).toEqual([
          'checkItems',
          'createSale',
          'checkItems',
          'requestItemRegistration',
          'retrySale',
          'enterFiscalDay',
          'handOverStock',
        ]);
        expect(s.inputs('checkItems')[1]).toMatchObject({ fresh: true });
        expect(s.inputs('requestItemRegistration')).toEqual([expect.objectContaining({ itemId: MILK })]);
        expect(end.history.some((e) => e.event.startsWith('parked'))).toBe(false);
      },
    );
  });

  it('parks for an operator when every item is registered, even under the old item_not_registered code', async () => {
    const createSale = async () =>
      submission.rejected(failed('Item not registered'), [
        { code: 'item_not_registered', message: 'Item not registered', itemId: MILK },
      ]);
    await h.run({ createSale }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked?.code).toBe('item_not_registered');
      expect(s.sequence()).toEqual(['checkItems', 'createSale', 'checkItems']);
      expect(s.inputs('checkItems')[1]).toMatchObject({ fresh: true });
    });
  });

  // A known-transient rejection is waited out on the application's outage watch: outage-logic.test.ts.
});

describe('a till refunds right after printing the receipt', () => {
  it('asked while the sale waits for the authority, the refund waits for it to sign, then credits it', async () => {
    let authoritySigned = false;
    const inFlight = {
      createSale: async () => submission.inFlight(saleDocument({ status: 'pending' })),
      awaitDocumentOutcome: async ({ documentId }: { documentId: string }) => {
        if (!authoritySigned) throw documentInFlight(documentId, 'pending');
        return { document: saleDocument({ id: documentId }) };
      },
    };
    await h.run(inFlight, async (s) => {
      const input = s.saleInput();
      const handle = await s.startSale(input);
      await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      const request = { reason: '01' as const, returnDate: '2026-11-22', traderInvoiceNumber: `CN-${Date.now()}` };
      const refund = await s.refund(input.traderInvoiceNumber, request);
      // The sale is on its way, not refused: the refund reads it again, filing nothing meanwhile.
      await eventually(
        () => s.calls.filter((c) => c.name === 'findSignedSale').length,
        (n) => n >= 2,
        { timeoutMs: 20_000, intervalMs: 20, what: 'the refund reading the sale again' },
      );
      expect(s.inputs('createCreditNote')).toEqual([]);
      authoritySigned = true;
      const result = await refund.answer;
      expect(result.creditNote.status).toBe('completed');
      const closed = (await endWithin(handle)) as SaleState;
      expect(s.inputs('createCreditNote')).toEqual([expect.objectContaining({ saleId: closed.sale!.id })]);
    });
  });

  // While the sale's local hand-over runs, a read of its state waits for its workflow task's heartbeat (seconds).
  it(
    'starts the refund while the sale’s stock is still being handed over: it waits for the sale to close, then issues the credit note',
    { timeout: 90_000 },
    async () => {
      const held = heldHandOver();
      await h.run({ handOverStock: held.handOverStock }, async (s) => {
        try {
          const input = s.saleInput();
          const handle = await s.startSale(input);
          await held.underWay(s);
          const request = { reason: '06' as const, returnDate: '2026-11-22', traderInvoiceNumber: `CN-${Date.now()}` };
          const refund = await s.refund(input.traderInvoiceNumber, request);
          // The sale is signed but still open: the refund's read finds it running, and files nothing meanwhile.
          await eventually(
            () => s.inputs('findSignedSale').length,
            (n) => n > 0,
            { timeoutMs: 20_000, intervalMs: 20, what: 'the refund reading the sale' },
          );
          await new Promise((resolve) => setTimeout(resolve, 500));
          expect((await handle.describe()).status.name).toBe('RUNNING');
          expect(s.inputs('createCreditNote')).toEqual([]);
          held.release();
          const result = await refund.answer;
          expect(result.creditNote.status).toBe('completed');
          const closed = (await endWithin(handle)) as SaleState;
          const refunded = await s.refundState(refund.handle);
          expect(refunded.creditNote?.receipt?.originalCuInvoiceNo).toBe(closed.sale?.receipt?.cuInvoiceNo);
          // Filed after the sale closed, from what the sale closed with.
          const closedAt = (await handle.describe()).closeTime!.getTime();
          const filed = s.calls.find((c) => c.name === 'createCreditNote')!;
          expect(filed.scheduledAtMs).toBeGreaterThanOrEqual(closedAt);
          expect(filed.input).toMatchObject({ saleId: closed.sale!.id });
          // Read again once it closed: the first read found it signed but still handing its stock over.
          const reads = s.calls.filter((c) => c.name === 'findSignedSale').map((c) => c.attempt);
          expect(reads.length).toBeGreaterThanOrEqual(2);
          expect(reads).toEqual(reads.map((_, i) => i + 1));
          // The sale's lines, then the goods back (reason 06 restocks), each handed over once.
          expect(s.sequence().filter((name) => name !== 'findSignedSale')).toEqual([
            'checkItems',
            'createSale',
            'handOverStock',
            'enterFiscalDay',
            'handOverStock',
            'createCreditNote',
            'enterFiscalDay',
            'handOverStock',
          ]);
          expect(closed.stockMovements.map((m) => m.action)).toEqual(['DEDUCT', 'DEDUCT']);
          expect(result.stockMovements.map((m) => m.action)).toEqual(['ADD', 'ADD']);
        } finally {
          // A hand-over left held would keep the worker from shutting down at the end of the file.
          held.release();
        }
      });
    },
  );
});
