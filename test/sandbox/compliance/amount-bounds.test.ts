/**
 * A sale whose numbers no till could produce (a quantity × unit price beyond any double, a number written past
 * what JSON numbers hold, too many decimals) is a bad request: 400 `invalid_request` naming the field, in the
 * contract's error format, and nothing filed. Before, the product overflowed in the tax computation and the
 * sandbox answered 500, which a client retries as a server fault.
 */
import { describe, expect, it } from 'vitest';
import { DEMO, errorOf, invoiceNumber, saleRequest, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

const sugar = DEMO.items.sugar;

describe('the sandbox bounds the numbers of a sale request', () => {
  it.each([
    [
      'a line whose quantity × unitPrice overflows',
      [{ itemId: sugar, quantity: 1e200, unitPrice: 1e200 }],
      'lines[0].quantity',
    ],
    ['a quantity beyond any till', [{ itemId: sugar, quantity: 1e9, unitPrice: 1 }], 'lines[0].quantity'],
    ['a unit price beyond any till', [{ itemId: sugar, quantity: 1, unitPrice: 1e15 }], 'lines[0].unitPrice'],
    ['a line amount beyond any till', [{ itemId: sugar, quantity: 1_000_000, unitPrice: 1_000_000_000 }], 'lines[0]'],
    ['a quantity with 5 decimals', [{ itemId: sugar, quantity: 1.00001, unitPrice: 1 }], 'lines[0].quantity'],
    ['a unit price with 5 decimals', [{ itemId: sugar, quantity: 1, unitPrice: 0.00001 }], 'lines[0].unitPrice'],
    [
      'a sale total beyond any till',
      Array.from({ length: 20 }, () => ({ itemId: sugar, quantity: 1000, unitPrice: 999_999_999 })),
      'lines',
    ],
  ])('refuses %s with 400 invalid_request naming the field, filing nothing', async (_what, lines, field) => {
    const request = saleRequest({ lines });
    const answer = await client.post('/v1/sales', request);
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.message.startsWith(`${field}: `)).toBe(true);
    expect(await sbx.sandbox.inspector.documents({ traderInvoiceNumber: String(request.traderInvoiceNumber) })).toEqual(
      [],
    );
  });

  it('refuses a number JSON cannot hold (1e400 reads as Infinity) with 400, not 500', async () => {
    const rawBody = `{"traderInvoiceNumber":"${invoiceNumber()}","saleDate":"2025-06-01","lines":[{"itemId":"${sugar}","quantity":1e400,"unitPrice":1}]}`;
    const answer = await client.call('POST', '/v1/sales', { rawBody, headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      code: 'invalid_request',
      message: 'lines[0].quantity: must be a finite number',
    });
  });

  it('accepts the largest sale a till could ring up, 4 decimals included', async () => {
    const lines = [
      { itemId: sugar, quantity: 1_000, unitPrice: 999_999_999.9999 },
      { itemId: DEMO.items.milk, quantity: 0.0001, unitPrice: 65.1234 },
    ];
    const answer = await client.post('/v1/sales', saleRequest({ lines }));
    expect(answer.status).toBe(201);
  });
});
