import { describe, expect, it } from 'vitest';
import { parseRefundRequest, parseSaleInput, SaleInputError } from '../../src/client/index.js';
import type { RefundRequest, SaleInput } from '../../src/client/index.js';
import { RequestValidator, type CreateSaleInput } from '../../src/compliance/requests.js';
import { RequestValidationError } from '../../src/http/errors.js';

function validSale(): SaleInput {
  return {
    businessId: 'biz_demo_nairobi',
    branchId: '00',
    traderInvoiceNumber: 'INV-1',
    saleDate: '2024-02-29',
    paymentTypeCode: '01',
    customer: { name: 'Wanjiku', pin: 'A123456789Z', phone: '+254700000000', email: 'wanjiku@example.co.ke' },
    lines: [{ itemId: 'ITEM-1', quantity: 2, unitPrice: 0, description: 'free sample' }],
    options: { refundWindowDays: 30, outcomeTimeout: '24 hours', itemFixDeadline: '7d', transientRetryLimit: 5 },
  };
}

function validRefund(): RefundRequest {
  return { reason: '01', returnDate: '2024-03-01', traderInvoiceNumber: 'CN-1', restock: true };
}

/** Applies `change` to a fresh valid sale (the path's last key set to `value`, or removed when undefined). */
function saleWith(path: string, value: unknown): unknown {
  const sale = validSale() as unknown as Record<string, unknown>;
  const keys = path.split('.');
  let target = sale;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return sale;
}

function failure(parse: () => unknown): SaleInputError {
  try {
    parse();
  } catch (err) {
    if (err instanceof SaleInputError) return err;
    throw err;
  }
  throw new Error('expected a SaleInputError');
}

describe('parseSaleInput', () => {
  it('accepts a complete sale unchanged', () => {
    expect(parseSaleInput(validSale())).toEqual(validSale());
  });

  it('accepts the smallest sale', () => {
    const minimal = {
      businessId: 'b',
      traderInvoiceNumber: 'x',
      saleDate: '2025-12-31',
      lines: [{ itemId: 'i', quantity: 0.001, unitPrice: 0 }],
    };
    expect(parseSaleInput(minimal)).toEqual(minimal);
  });

  it.each([
    ['businessId', undefined, 'businessId', 'is required'],
    ['businessId', '', 'businessId', 'must not be empty'],
    ['businessId', '   ', 'businessId', 'must not be empty'],
    ['businessId', 'biz:1', 'businessId', "must not contain ':' (it separates the parts of the sale's workflow id)"],
    ['businessId', 42, 'businessId', 'must be a string'],
    ['branchId', '', 'branchId', 'must not be empty'],
    ['traderInvoiceNumber', undefined, 'traderInvoiceNumber', 'is required'],
    ['traderInvoiceNumber', '', 'traderInvoiceNumber', 'must not be empty'],
    ['traderInvoiceNumber', 'x'.repeat(51), 'traderInvoiceNumber', 'must be at most 50 characters'],
    ['saleDate', undefined, 'saleDate', 'is required'],
    ['saleDate', '15/01/2025', 'saleDate', 'must be a date in the form YYYY-MM-DD'],
    ['saleDate', '2025-1-5', 'saleDate', 'must be a date in the form YYYY-MM-DD'],
    ['saleDate', '2025-02-29', 'saleDate', 'must be a real calendar date'],
    ['saleDate', '2025-13-01', 'saleDate', 'must be a real calendar date'],
    ['paymentTypeCode', ' ', 'paymentTypeCode', 'must not be empty'],
    ['customer', 'Wanjiku', 'customer', 'must be an object'],
    ['customer.email', 'not-an-email', 'customer.email', 'must be a valid email address'],
    ['customer.phone', 254700000000, 'customer.phone', 'must be a string'],
    ['lines', undefined, 'lines', 'is required'],
    ['lines', {}, 'lines', 'must be a list'],
    ['lines', [], 'lines', 'must have at least 1 line'],
    ['lines.0.itemId', undefined, 'lines[0].itemId', 'is required'],
    ['lines.0.itemId', '', 'lines[0].itemId', 'must not be empty'],
    ['lines.0.quantity', 0, 'lines[0].quantity', 'must be more than 0'],
    ['lines.0.quantity', -1, 'lines[0].quantity', 'must be more than 0'],
    ['lines.0.quantity', '2', 'lines[0].quantity', 'must be a number'],
    ['lines.0.quantity', Number.POSITIVE_INFINITY, 'lines[0].quantity', 'must be a finite number'],
    ['lines.0.quantity', Number.NaN, 'lines[0].quantity', 'must be a finite number'],
    ['lines.0.unitPrice', -0.01, 'lines[0].unitPrice', 'must be 0 or more'],
    ['lines.0.unitPrice', Number.POSITIVE_INFINITY, 'lines[0].unitPrice', 'must be a finite number'],
    ['lines.0.quantity', 1_000_001, 'lines[0].quantity', 'must be at most 1000000'],
    ['lines.0.quantity', 1.00001, 'lines[0].quantity', 'must have at most 4 decimal places'],
    ['lines.0.unitPrice', 1e200, 'lines[0].unitPrice', 'must be at most 1000000000'],
    ['lines.0.unitPrice', 0.00001, 'lines[0].unitPrice', 'must have at most 4 decimal places'],
    [
      'lines.0',
      { itemId: 'ITEM-1', quantity: 1_000_000, unitPrice: 1_000_000_000 },
      'lines[0]',
      'quantity × unitPrice must be at most 1000000000000',
    ],
    ['lines.0.description', 7, 'lines[0].description', 'must be a string'],
    ['options', [], 'options', 'must be an object'],
    ['options.refundWindowDays', -1, 'options.refundWindowDays', 'must be between 0 and 365'],
    ['options.refundWindowDays', 366, 'options.refundWindowDays', 'must be between 0 and 365'],
    [
      'options.outcomeTimeout',
      '24',
      'options.outcomeTimeout',
      "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'",
    ],
    [
      'options.outcomeTimeout',
      'one day',
      'options.outcomeTimeout',
      "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'",
    ],
    [
      'options.outcomeTimeout',
      '-5m',
      'options.outcomeTimeout',
      "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'",
    ],
    ['options.outcomeTimeout', '0s', 'options.outcomeTimeout', 'must be longer than 0'],
    ['options.outcomeTimeout', 86_400_000, 'options.outcomeTimeout', 'must be a string'],
    [
      'options.itemFixDeadline',
      '7 fortnights',
      'options.itemFixDeadline',
      "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'",
    ],
    ['options.transientRetryLimit', 51, 'options.transientRetryLimit', 'must be between 0 and 50'],
    ['options.transientRetryLimit', -1, 'options.transientRetryLimit', 'must be between 0 and 50'],
    ['options.transientRetryLimit', 2.5, 'options.transientRetryLimit', 'must be a whole number'],
  ])('refuses %s = %j, naming %s', (path, value, field, reason) => {
    const err = failure(() => parseSaleInput(saleWith(path, value)));
    expect(err.field).toBe(field);
    expect(err.reason).toBe(reason);
    expect(err.message).toBe(`invalid sale input: ${field} ${reason}`);
  });

  it('accepts each limit at its edge', () => {
    const lines = Array.from({ length: 500 }, (_, i) => ({ itemId: `ITEM-${i}`, quantity: 1, unitPrice: 1 }));
    const edges = {
      ...validSale(),
      traderInvoiceNumber: 'x'.repeat(50),
      lines,
      options: { refundWindowDays: 365, transientRetryLimit: 50, outcomeTimeout: '30s', itemFixDeadline: '1.5 hours' },
    };
    expect(parseSaleInput(edges)).toEqual(edges);
    expect(parseSaleInput({ ...edges, options: { refundWindowDays: 0, transientRetryLimit: 0 } }).options).toEqual({
      refundWindowDays: 0,
      transientRetryLimit: 0,
    });
  });

  it('refuses a sale whose lines total more than 1e13', () => {
    const lines = Array.from({ length: 20 }, (_, i) => ({
      itemId: `ITEM-${i}`,
      quantity: 1000,
      unitPrice: 999_999_999,
    }));
    expect(failure(() => parseSaleInput({ ...validSale(), lines })).message).toBe(
      'invalid sale input: lines must total at most 10000000000000 (quantity × unitPrice summed)',
    );
  });

  it('refuses more than 500 lines', () => {
    const lines = Array.from({ length: 501 }, (_, i) => ({ itemId: `ITEM-${i}`, quantity: 1, unitPrice: 1 }));
    expect(failure(() => parseSaleInput({ ...validSale(), lines })).message).toBe(
      'invalid sale input: lines must have at most 500 lines',
    );
  });

  it('names the line that is wrong', () => {
    const sale = validSale();
    sale.lines.push({ itemId: 'ITEM-2', quantity: 1, unitPrice: 1 }, { itemId: 'ITEM-3', quantity: 1, unitPrice: -5 });
    expect(failure(() => parseSaleInput(sale)).field).toBe('lines[2].unitPrice');
  });

  it.each([
    ['a top-level field', { ...validSale(), tradeInvoiceNumber: 'INV-2' }, 'tradeInvoiceNumber'],
    ['a line field', saleWith('lines.0.qty', 1), 'lines[0].qty'],
    ['a customer field', saleWith('customer.mail', 'a@b.co'), 'customer.mail'],
    ['an option', saleWith('options.refundDays', 10), 'options.refundDays'],
  ])('refuses an unknown field (%s), naming it', (_what, input, field) => {
    const err = failure(() => parseSaleInput(input));
    expect(err.field).toBe(field);
    expect(err.reason).toBe('is not a known field');
  });

  it('names a misspelt field before the required field it was meant to be', () => {
    const err = failure(() => parseSaleInput(saleWithTypo()));
    expect(err.message).toBe('invalid sale input: lines[0].quantitty is not a known field (and 1 more problem)');
    expect(err.problems).toContainEqual({ field: 'lines[0].quantity', reason: 'is required' });
  });

  it.each([null, 'sale', 42, []])('refuses %j as a whole', (input) => {
    const err = failure(() => parseSaleInput(input));
    expect(err.field).toBe('(input)');
    expect(err.reason).toBe('must be an object');
  });
});

describe('one definition of a sale request (src/contracts/sale-input.ts)', () => {
  /** What the compliance client would be asked to file for `sale`: the request without the sales client's own fields. */
  function complianceRefusal(sale: unknown): { field: string; reason: string } {
    const { businessId: _businessId, options: _options, ...request } = sale as SaleInput;
    try {
      new RequestValidator().validate('createSale', request as CreateSaleInput);
    } catch (err) {
      if (err instanceof RequestValidationError) return { field: err.field, reason: err.reason };
      throw err;
    }
    throw new Error('expected the compliance client to refuse it too');
  }

  it.each([
    ['traderInvoiceNumber', 'x'.repeat(51)],
    ['traderInvoiceNumber', '  '],
    ['saleDate', '2025-02-29'],
    ['saleDate', '29/02/2024'],
    ['paymentTypeCode', ''],
    ['branchId', ' '],
    ['lines', []],
    ['lines', Array.from({ length: 501 }, () => ({ itemId: 'i', quantity: 1, unitPrice: 1 }))],
    ['lines.0.itemId', ''],
    ['lines.0.quantity', 0],
    ['lines.0.quantity', Number.NaN],
    ['lines.0.unitPrice', -0.01],
    ['lines.0.quantity', 1e200],
    ['lines.0.unitPrice', 1.23456],
    ['lines.0', { itemId: 'i', quantity: 1e6, unitPrice: 1e9 }],
    ['customer.pin', 42],
  ])('the start-time check and the compliance client refuse %s = %j alike', (path, value) => {
    const sale = saleWith(path, value);
    const err = failure(() => parseSaleInput(sale));
    expect({ field: err.field, reason: err.reason }).toEqual(complianceRefusal(sale));
  });

  it('the start-time check and the compliance client refuse a sale total over 1e13 alike', () => {
    const sale = {
      ...validSale(),
      lines: Array.from({ length: 20 }, () => ({ itemId: 'i', quantity: 1000, unitPrice: 999_999_999 })),
    };
    const err = failure(() => parseSaleInput(sale));
    expect({ field: err.field, reason: err.reason }).toEqual(complianceRefusal(sale));
  });

  it('a sale the start-time check accepts is a request the compliance client accepts, unchanged', () => {
    const { businessId: _businessId, options: _options, ...request } = parseSaleInput(validSale());
    expect(new RequestValidator().validate('createSale', request)).toEqual(request);
  });
});

function saleWithTypo(): unknown {
  const sale = validSale() as unknown as { lines: Array<Record<string, unknown>> };
  const line = sale.lines[0]!;
  line.quantitty = line.quantity;
  delete line.quantity;
  return sale;
}

describe('parseRefundRequest', () => {
  it('accepts every credit note reason', () => {
    for (const reason of ['01', '02', '03', '04', '05', '06'] as const) {
      expect(parseRefundRequest({ ...validRefund(), reason })).toEqual({ ...validRefund(), reason });
    }
    const { restock: _restock, ...withoutRestock } = validRefund();
    expect(parseRefundRequest(withoutRestock)).toEqual(withoutRestock);
  });

  it.each([
    ['reason', undefined, 'reason', 'must be one of 01, 02, 03, 04, 05, 06'],
    ['reason', '07', 'reason', 'must be one of 01, 02, 03, 04, 05, 06'],
    ['reason', 1, 'reason', 'must be one of 01, 02, 03, 04, 05, 06'],
    ['returnDate', undefined, 'returnDate', 'is required'],
    ['returnDate', '2024-02-30', 'returnDate', 'must be a real calendar date'],
    ['returnDate', 'yesterday', 'returnDate', 'must be a date in the form YYYY-MM-DD'],
    ['traderInvoiceNumber', '', 'traderInvoiceNumber', 'must not be empty'],
    ['traderInvoiceNumber', 'c'.repeat(51), 'traderInvoiceNumber', 'must be at most 50 characters'],
    ['restock', 'yes', 'restock', 'must be a boolean'],
    ['reasonCode', '01', 'reasonCode', 'is not a known field'],
  ])('refuses %s = %j, naming %s', (key, value, field, reason) => {
    const request: Record<string, unknown> = { ...validRefund() };
    if (value === undefined) delete request[key];
    else request[key] = value;
    const err = failure(() => parseRefundRequest(request));
    expect(err.message).toBe(`invalid refund request: ${field} ${reason}`);
  });
});
