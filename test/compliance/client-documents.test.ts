import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CallbackNotificationSchema,
  authorityErrorsFromError,
  saleFromError,
  type Sale,
} from '../../src/compliance/schemas.js';
import { isInFlight, isSigned } from '../../src/contracts/compliance-rules.js';
import { RequestValidationError } from '../../src/http/errors.js';
import {
  DEMO,
  TODAY,
  apiErrorOf,
  idempotencyKey,
  invoiceNumber,
  nairobiSale,
  useClients,
  useSandbox,
} from './helpers.js';

const sandbox = useSandbox();
const client = useClients(sandbox);
const nairobi = () => client(DEMO.keys.nairobi);

const documentsNamed = (traderInvoiceNumber: string) => sandbox().inspector.documents({ traderInvoiceNumber });

async function signedSale(): Promise<Sale> {
  const { data } = await nairobi().createSale(nairobiSale(), idempotencyKey());
  expect(isSigned(data)).toBe(true);
  return data;
}

describe('createSale', () => {
  it('201: signed at once, with tax-inclusive VAT per line and the key recorded', async () => {
    const key = idempotencyKey();
    const input = nairobiSale({
      customer: { name: 'Achieng', pin: 'A123456789B' },
      lines: [
        { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
        { itemId: DEMO.items.milk, quantity: 3, unitPrice: 65, description: 'chilled' },
      ],
    });
    const { data: sale, meta } = await nairobi().createSale(input, key);

    expect(meta.status).toBe(201);
    expect(meta.idempotentReplayed).toBe(false);
    expect(meta.rateLimit.limit).toBe(120);
    expect(sale).toMatchObject({
      type: 'sale',
      status: 'completed',
      traderInvoiceNumber: input.traderInvoiceNumber,
      saleDate: TODAY,
    });
    expect(sale.customer).toMatchObject({ name: 'Achieng', pin: 'A123456789B' });
    expect(sale.lines.map((l) => [l.itemId, l.taxRate, l.total])).toEqual([
      [DEMO.items.sugar, 16, 500],
      [DEMO.items.milk, 0, 195],
    ]);
    expect(sale.lines[0]).toMatchObject({ taxAmount: 68.97, taxableAmount: 431.03 });
    expect(sale.totals).toEqual({ total: 695, taxableAmount: 626.03, taxAmount: 68.97 });
    expect(sale.receipt).toMatchObject({
      receiptLabel: 'NS',
      cuInvoiceNo: expect.stringMatching(/^KRACU\d{10}\/\d+$/),
    });
    expect(sale.callback).toBeNull();

    const [filed] = await documentsNamed(input.traderInvoiceNumber);
    expect(filed?.idempotencyKeys).toEqual([key]);
  });

  it('a repeat with the same key is a replay: 200, Idempotent-Replayed, nothing new filed', async () => {
    const key = idempotencyKey();
    const input = nairobiSale();
    const first = await nairobi().createSale(input, key);
    const again = await nairobi().createSale(input, key);
    expect(again.meta).toMatchObject({ status: 200, idempotentReplayed: true });
    expect(again.data.id).toBe(first.data.id);
    expect(again.data.receipt).toEqual(first.data.receipt);
    expect(await documentsNamed(input.traderInvoiceNumber)).toHaveLength(1);
  });

  it('the same key with another body is 422 idempotency_key_reused and files nothing', async () => {
    const key = idempotencyKey();
    const first = nairobiSale();
    await nairobi().createSale(first, key);
    const other = nairobiSale();
    const err = await apiErrorOf(nairobi().createSale(other, key));
    expect(err).toMatchObject({ status: 422, code: 'idempotency_key_reused', retry: 'final' });
    expect(await documentsNamed(other.traderInvoiceNumber)).toHaveLength(0);
  });

  it('202: in flight, then settled by the authority', async () => {
    const input = nairobiSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.async) });
    const { data, meta } = await nairobi().createSale(input, idempotencyKey());
    expect(meta.status).toBe(202);
    expect(isInFlight(data.status)).toBe(true);
    expect(isSigned(data)).toBe(false);
    expect(data.receipt).toBeNull();

    await sandbox().inspector.waitForDocument(data.id, (d) => d.sale.status === 'completed');
    const later = await nairobi().getSale(data.id);
    expect(isSigned(later.data)).toBe(true);
  });

  it('422 authority_rejected carries the failed sale and its causes', async () => {
    const input = nairobiSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) });
    const err = await apiErrorOf(nairobi().createSale(input, idempotencyKey()));
    expect(err).toMatchObject({ status: 422, code: 'authority_rejected', retry: 'final', requestSent: true });
    const sale = saleFromError(err);
    expect(sale).toMatchObject({ traderInvoiceNumber: input.traderInvoiceNumber, status: 'failed', receipt: null });
    expect(sale?.error).toEqual(expect.any(String));
    expect(authorityErrorsFromError(err).map((e) => e.code)).toEqual(['authority_rejected']);
  });

  it('a customer PIN the authority refuses is a rejection with cause invalid_customer_pin', async () => {
    const err = await apiErrorOf(
      nairobi().createSale(nairobiSale({ customer: { pin: DEMO.invalidCustomerPin } }), idempotencyKey()),
    );
    expect(err.code).toBe('authority_rejected');
    expect(authorityErrorsFromError(err).map((e) => e.code)).toEqual(['invalid_customer_pin']);
  });

  it('an unregistered item is rejected naming the line; registering it and retrying signs the sale', async () => {
    const input = nairobiSale({ lines: [{ itemId: DEMO.items.bathSoap, quantity: 1, unitPrice: 120 }] });
    const err = await apiErrorOf(nairobi().createSale(input, idempotencyKey()));
    expect(err.code).toBe('authority_rejected');
    expect(authorityErrorsFromError(err)).toEqual([
      expect.objectContaining({ code: 'item_not_registered', field: 'lines[0].itemId', itemId: DEMO.items.bathSoap }),
    ]);
    const failed = saleFromError(err);
    expect(failed?.status).toBe('failed');

    await nairobi().registerItem(DEMO.items.bathSoap);
    const retried = await nairobi().retrySale(failed!.id);
    expect(retried.meta.status).toBe(200);
    expect(retried.data).toMatchObject({ id: failed!.id, status: 'completed' });
    expect(isSigned(retried.data)).toBe(true);
  });

  it('an item the business does not have is 400 naming the line, and nothing is filed', async () => {
    const input = nairobiSale({ lines: [{ itemId: DEMO.items.mombasaWater, quantity: 1, unitPrice: 50 }] });
    const err = await apiErrorOf(nairobi().createSale(input, idempotencyKey()));
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', retry: 'final' });
    expect(err.message).toContain('lines[0].itemId');
    expect(await documentsNamed(input.traderInvoiceNumber)).toHaveLength(0);
  });

  it('a bad request is refused before sending: nothing reaches the service', async () => {
    const before = (await sandbox().inspector.requests()).total;
    const bad = nairobi().createSale(nairobiSale({ lines: [] }), idempotencyKey());
    await expect(bad).rejects.toBeInstanceOf(RequestValidationError);
    await expect(nairobi().createSale(nairobiSale(), 'short')).rejects.toMatchObject({ field: 'Idempotency-Key' });
    expect((await sandbox().inspector.requests()).total).toBe(before);
  });
});

describe('retrySale', () => {
  it('a transient rejection succeeds on retry; retrying a completed document changes nothing (C35)', async () => {
    const input = nairobiSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.flaky) });
    const err = await apiErrorOf(nairobi().createSale(input, idempotencyKey()));
    expect(authorityErrorsFromError(err).map((e) => e.code)).toEqual(['authority_unavailable']);
    const id = saleFromError(err)!.id;

    const first = await nairobi().retrySale(id);
    expect(isSigned(first.data)).toBe(true);
    const second = await nairobi().retrySale(id);
    expect(second.data.receipt).toEqual(first.data.receipt);
    expect((await sandbox().inspector.document(id)).submissions).toBe(2);
  });

  it('a document rejected again is 422 authority_rejected with the document', async () => {
    const input = nairobiSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) });
    const id = saleFromError(await apiErrorOf(nairobi().createSale(input, idempotencyKey())))!.id;
    const err = await apiErrorOf(nairobi().retrySale(id));
    expect(err).toMatchObject({ status: 422, code: 'authority_rejected' });
    expect(saleFromError(err)).toMatchObject({ id, status: 'failed' });
  });

  it('an in-flight document is 409 not_retryable', async () => {
    const input = nairobiSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.async) });
    const { data } = await nairobi().createSale(input, idempotencyKey());
    const err = await apiErrorOf(nairobi().retrySale(data.id));
    expect(err).toMatchObject({ status: 409, code: 'not_retryable', retry: 'final' });
  });
});

describe('createCreditNote', () => {
  it('201: reverses the sale in full, once; a second one is 422 already_credited naming the first', async () => {
    const sale = await signedSale();
    const input = {
      traderInvoiceNumber: invoiceNumber('CN-'),
      returnDate: TODAY,
      saleId: sale.id,
      reason: '06',
    } as const;
    const key = idempotencyKey();
    const { data: note, meta } = await nairobi().createCreditNote(input, key);

    expect(meta.status).toBe(201);
    expect(note).toMatchObject({ type: 'credit_note', status: 'completed', originalSaleId: sale.id });
    expect(note.totals).toEqual({
      total: -sale.totals.total,
      taxableAmount: -sale.totals.taxableAmount,
      taxAmount: -sale.totals.taxAmount,
    });
    expect(note.lines.map((l) => l.quantity)).toEqual(sale.lines.map((l) => -l.quantity));
    expect(note.receipt).toMatchObject({ receiptLabel: 'NC', originalCuInvoiceNo: sale.receipt?.cuInvoiceNo });

    const replay = await nairobi().createCreditNote(input, key);
    expect(replay.meta).toMatchObject({ status: 200, idempotentReplayed: true });
    expect(replay.data.id).toBe(note.id);

    const err = await apiErrorOf(
      nairobi().createCreditNote({ ...input, traderInvoiceNumber: invoiceNumber('CN-') }, idempotencyKey()),
    );
    expect(err).toMatchObject({ status: 422, code: 'already_credited', retry: 'final' });
    expect(err.details.creditNoteId).toBe(note.id);
    expect(
      await sandbox().inspector.documents({ type: 'credit_note', traderInvoiceNumber: input.traderInvoiceNumber }),
    ).toHaveLength(1);
  });

  it('a sale that is not completed is 422 sale_not_completed', async () => {
    const { data } = await nairobi().createSale(
      nairobiSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.async) }),
      idempotencyKey(),
    );
    const err = await apiErrorOf(
      nairobi().createCreditNote(
        { traderInvoiceNumber: invoiceNumber('CN-'), returnDate: TODAY, saleId: data.id, reason: '01' },
        idempotencyKey(),
      ),
    );
    expect(err).toMatchObject({ status: 422, code: 'sale_not_completed' });
  });

  it("another business's sale is 404 not_found", async () => {
    const sale = await signedSale();
    const err = await apiErrorOf(
      client(DEMO.keys.mombasa).createCreditNote(
        { traderInvoiceNumber: invoiceNumber('CN-'), returnDate: TODAY, saleId: sale.id, reason: '03' },
        idempotencyKey(),
      ),
    );
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('result callbacks to a loopback URL (C48)', () => {
  let receiver: Server;
  let receiverUrl: string;
  const received: Array<{ headers: IncomingMessage['headers']; body: unknown }> = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/etims`;
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('the outcome is delivered to the callback URL and recorded on the sale', async () => {
    const { data } = await nairobi().createSale(nairobiSale({ callbackUrl: receiverUrl }), idempotencyKey());
    expect(data.callback?.url).toBe(receiverUrl);
    await sandbox().inspector.waitForCallbackAttempts(data.id, (attempts) => attempts.some((a) => a.status === 204));

    const delivery = received.find((r) => CallbackNotificationSchema.safeParse(r.body).data?.data.sale.id === data.id);
    expect(delivery).toBeDefined();
    expect(CallbackNotificationSchema.parse(delivery!.body).event).toBe('sale.completed');
    const later = await nairobi().getSale(data.id);
    expect(later.data.callback).toMatchObject({
      status: 'delivered',
      event: 'sale.completed',
      lastResponseStatus: 204,
    });
  });

  it('without allowLoopbackCallbacks the client refuses a loopback URL before sending', async () => {
    const strict = client(DEMO.keys.nairobi, { allowLoopbackCallbacks: false });
    await expect(strict.createSale(nairobiSale({ callbackUrl: receiverUrl }), idempotencyKey())).rejects.toMatchObject({
      name: 'RequestValidationError',
      field: 'callbackUrl',
    });
  });
});
