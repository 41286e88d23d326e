import { describe, expect, it } from 'vitest';
import { RequestValidationError } from '../../src/http/errors.js';
import {
  RequestValidator,
  validateIdempotencyKey,
  validatePathId,
  type CreateCreditNoteInput,
  type CreateSaleInput,
  type StockAdjustmentInput,
} from '../../src/compliance/requests.js';

const validator = new RequestValidator();

/** Runs `fn` and returns the RequestValidationError it throws (fails the test if it throws nothing else). */
function refusal(fn: () => unknown): RequestValidationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RequestValidationError);
    return err as RequestValidationError;
  }
  throw new Error('expected a RequestValidationError, but the input was accepted');
}

function expectRefused(fn: () => unknown, field: string, reason?: RegExp): void {
  const err = refusal(fn);
  expect(err.field).toBe(field);
  if (reason) expect(err.reason).toMatch(reason);
  expect(err.message).toContain(field);
  expect(err.retry).toBe('final');
  expect(err.requestSent).toBe(false);
}

const sale = (overrides: Partial<CreateSaleInput> = {}): CreateSaleInput => ({
  traderInvoiceNumber: 'INV-1',
  saleDate: '2025-03-14',
  lines: [{ itemId: 'item_1', quantity: 1, unitPrice: 100 }],
  ...overrides,
});

const creditNote = (overrides: Partial<CreateCreditNoteInput> = {}): CreateCreditNoteInput => ({
  traderInvoiceNumber: 'CN-1',
  returnDate: '2025-03-15',
  saleId: 'sale_1',
  reason: '06',
  ...overrides,
});

const stock = (overrides: Partial<StockAdjustmentInput> = {}): StockAdjustmentInput => ({
  itemId: 'item_1',
  action: 'ADD',
  quantity: 5,
  ...overrides,
});

const line = (quantity = 1) => ({ itemId: 'item_1', quantity, unitPrice: 10 });

describe('createSale', () => {
  it('returns only the documented fields, unchanged', () => {
    const body = validator.validate('createSale', {
      ...sale({ customer: { name: 'Wanjiru', pin: 'A123456789Z' }, branchId: '00', paymentTypeCode: '01' }),
      unknownField: 'dropped',
    } as CreateSaleInput);
    expect(body).toEqual({
      traderInvoiceNumber: 'INV-1',
      saleDate: '2025-03-14',
      paymentTypeCode: '01',
      branchId: '00',
      customer: { name: 'Wanjiru', pin: 'A123456789Z' },
      lines: [{ itemId: 'item_1', quantity: 1, unitPrice: 100 }],
    });
  });

  it('traderInvoiceNumber: 1 and 50 characters pass, empty and 51 do not', () => {
    expect(validator.validate('createSale', sale({ traderInvoiceNumber: 'X' })).traderInvoiceNumber).toBe('X');
    expect(
      validator.validate('createSale', sale({ traderInvoiceNumber: 'X'.repeat(50) })).traderInvoiceNumber,
    ).toHaveLength(50);
    expectRefused(
      () => validator.validate('createSale', sale({ traderInvoiceNumber: '' })),
      'traderInvoiceNumber',
      /empty/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ traderInvoiceNumber: '   ' })),
      'traderInvoiceNumber',
      /empty/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ traderInvoiceNumber: 'X'.repeat(51) })),
      'traderInvoiceNumber',
      /at most 50/,
    );
  });

  it('names a missing required field', () => {
    const { traderInvoiceNumber: _omit, ...rest } = sale();
    expectRefused(() => validator.validate('createSale', rest as CreateSaleInput), 'traderInvoiceNumber', /required/);
    const { saleDate: _date, ...noDate } = sale();
    expectRefused(() => validator.validate('createSale', noDate as CreateSaleInput), 'saleDate', /required/);
    const { lines: _lines, ...noLines } = sale();
    expectRefused(() => validator.validate('createSale', noLines as CreateSaleInput), 'lines', /required/);
  });

  it('refuses something that is not an object', () => {
    expectRefused(() => validator.validate('createSale', null as unknown as CreateSaleInput), '(request)', /object/);
  });

  it('saleDate must be YYYY-MM-DD and a real date', () => {
    expect(validator.validate('createSale', sale({ saleDate: '2024-02-29' })).saleDate).toBe('2024-02-29');
    expectRefused(() => validator.validate('createSale', sale({ saleDate: '2025-02-29' })), 'saleDate', /calendar/);
    expectRefused(() => validator.validate('createSale', sale({ saleDate: '2025-04-31' })), 'saleDate', /calendar/);
    expectRefused(() => validator.validate('createSale', sale({ saleDate: '2025-13-01' })), 'saleDate', /calendar/);
    expectRefused(() => validator.validate('createSale', sale({ saleDate: '2025-00-10' })), 'saleDate', /calendar/);
    expectRefused(() => validator.validate('createSale', sale({ saleDate: '14/03/2025' })), 'saleDate', /YYYY-MM-DD/);
    expectRefused(() => validator.validate('createSale', sale({ saleDate: '2025-3-14' })), 'saleDate', /YYYY-MM-DD/);
    expectRefused(
      () => validator.validate('createSale', sale({ saleDate: '2025-03-14T10:00:00Z' })),
      'saleDate',
      /YYYY-MM-DD/,
    );
  });

  it('lines: 1 and 500 pass, 0 and 501 do not', () => {
    expect(validator.validate('createSale', sale({ lines: [line()] })).lines).toHaveLength(1);
    expect(
      validator.validate('createSale', sale({ lines: Array.from({ length: 500 }, () => line()) })).lines,
    ).toHaveLength(500);
    expectRefused(() => validator.validate('createSale', sale({ lines: [] })), 'lines', /at least 1/);
    expectRefused(
      () => validator.validate('createSale', sale({ lines: Array.from({ length: 501 }, () => line()) })),
      'lines',
      /at most 500/,
    );
  });

  it('line quantity must be more than 0, unit price 0 or more, item id non-empty; the path names the line', () => {
    expect(validator.validate('createSale', sale({ lines: [line(0.01)] })).lines[0]?.quantity).toBe(0.01);
    expect(
      validator.validate('createSale', sale({ lines: [{ itemId: 'i', quantity: 1, unitPrice: 0 }] })).lines[0]
        ?.unitPrice,
    ).toBe(0);
    expectRefused(
      () => validator.validate('createSale', sale({ lines: [line(), line(0)] })),
      'lines[1].quantity',
      /more than 0/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ lines: [line(-1)] })),
      'lines[0].quantity',
      /more than 0/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ lines: [line(Number.NaN)] })),
      'lines[0].quantity',
      /finite/,
    );
    expectRefused(
      () =>
        validator.validate(
          'createSale',
          sale({ lines: [line(), line(), { itemId: 'i', quantity: 1, unitPrice: -0.01 }] }),
        ),
      'lines[2].unitPrice',
      /0 or more/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ lines: [{ itemId: '', quantity: 1, unitPrice: 1 }] })),
      'lines[0].itemId',
      /empty/,
    );
    expectRefused(
      () =>
        validator.validate(
          'createSale',
          sale({ lines: [{ itemId: 'i', quantity: '2', unitPrice: 1 } as unknown as ReturnType<typeof line>] }),
        ),
      'lines[0].quantity',
      /number/,
    );
  });

  it('reports the first wrong field in document order', () => {
    expectRefused(
      () => validator.validate('createSale', sale({ traderInvoiceNumber: '', saleDate: 'bad', lines: [] })),
      'traderInvoiceNumber',
    );
  });

  it('callbackUrl follows the documented rule', () => {
    expect(validator.validate('createSale', sale({ callbackUrl: 'https://hooks.example.com/cb' })).callbackUrl).toBe(
      'https://hooks.example.com/cb',
    );
    expectRefused(
      () => validator.validate('createSale', sale({ callbackUrl: 'http://hooks.example.com/cb' })),
      'callbackUrl',
      /https/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ callbackUrl: 'https://localhost/cb' })),
      'callbackUrl',
      /public host/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ callbackUrl: 'https://10.0.0.5/cb' })),
      'callbackUrl',
      /public host/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ callbackUrl: 'https://a:b@hooks.example.com/' })),
      'callbackUrl',
      /password/,
    );
    expectRefused(
      () => validator.validate('createSale', sale({ callbackUrl: `https://hooks.example.com/${'a'.repeat(2049)}` })),
      'callbackUrl',
      /2048/,
    );
  });

  it('allowLoopbackCallbacks accepts http to loopback only', () => {
    const local = new RequestValidator({ allowLoopbackCallbacks: true });
    expect(local.validate('createSale', sale({ callbackUrl: 'http://127.0.0.1:9999/cb' })).callbackUrl).toBe(
      'http://127.0.0.1:9999/cb',
    );
    expect(local.validate('createSale', sale({ callbackUrl: 'http://localhost:9999/cb' })).callbackUrl).toBe(
      'http://localhost:9999/cb',
    );
    expectRefused(() => local.validate('createSale', sale({ callbackUrl: 'http://192.168.0.2/cb' })), 'callbackUrl');
    expectRefused(
      () => validator.validate('createSale', sale({ callbackUrl: 'http://127.0.0.1:9999/cb' })),
      'callbackUrl',
    );
  });
});

describe('createCreditNote', () => {
  it('accepts every documented reason and nothing else', () => {
    for (const reason of ['01', '02', '03', '04', '05', '06'] as const) {
      expect(validator.validate('createCreditNote', creditNote({ reason })).reason).toBe(reason);
    }
    for (const reason of ['00', '07', '6', 'refund', '']) {
      expectRefused(
        () => validator.validate('createCreditNote', creditNote({ reason: reason as CreateCreditNoteInput['reason'] })),
        'reason',
        /one of 01, 02, 03, 04, 05, 06/,
      );
    }
  });

  it('checks traderInvoiceNumber, returnDate, saleId and callbackUrl', () => {
    expect(
      validator.validate('createCreditNote', creditNote({ traderInvoiceNumber: 'C'.repeat(50) })).traderInvoiceNumber,
    ).toHaveLength(50);
    expectRefused(
      () => validator.validate('createCreditNote', creditNote({ traderInvoiceNumber: 'C'.repeat(51) })),
      'traderInvoiceNumber',
      /50/,
    );
    expectRefused(
      () => validator.validate('createCreditNote', creditNote({ returnDate: '2025-02-30' })),
      'returnDate',
      /calendar/,
    );
    expectRefused(() => validator.validate('createCreditNote', creditNote({ saleId: '' })), 'saleId', /empty/);
    expectRefused(
      () => validator.validate('createCreditNote', creditNote({ callbackUrl: 'https://billing.internal/x' })),
      'callbackUrl',
    );
  });
});

describe('adjustStock', () => {
  it('action is ADD or DEDUCT', () => {
    expect(validator.validate('adjustStock', stock({ action: 'DEDUCT' })).action).toBe('DEDUCT');
    expectRefused(() => validator.validate('adjustStock', stock({ action: 'add' as 'ADD' })), 'action', /ADD, DEDUCT/);
    expectRefused(() => validator.validate('adjustStock', stock({ action: 'REMOVE' as 'ADD' })), 'action');
  });

  it('quantity and unitPrice: 0 passes, below 0 does not', () => {
    expect(validator.validate('adjustStock', stock({ quantity: 0, unitPrice: 0 }))).toMatchObject({
      quantity: 0,
      unitPrice: 0,
    });
    expectRefused(() => validator.validate('adjustStock', stock({ quantity: -0.001 })), 'quantity', /0 or more/);
    expectRefused(() => validator.validate('adjustStock', stock({ unitPrice: -1 })), 'unitPrice', /0 or more/);
    expectRefused(
      () => validator.validate('adjustStock', stock({ quantity: Number.POSITIVE_INFINITY })),
      'quantity',
      /finite/,
    );
  });

  it('referenceId: 100 characters pass, 101 do not', () => {
    expect(validator.validate('adjustStock', stock({ referenceId: 'r'.repeat(100) })).referenceId).toHaveLength(100);
    expectRefused(
      () => validator.validate('adjustStock', stock({ referenceId: 'r'.repeat(101) })),
      'referenceId',
      /at most 100/,
    );
  });

  it('itemId is required and non-empty', () => {
    expectRefused(() => validator.validate('adjustStock', stock({ itemId: ' ' })), 'itemId', /empty/);
    const { itemId: _omit, ...rest } = stock();
    expectRefused(() => validator.validate('adjustStock', rest as StockAdjustmentInput), 'itemId', /required/);
  });
});

describe('registerItem', () => {
  it('registerItem takes branchId and reRegister only', () => {
    expect(validator.validate('registerItem', {})).toEqual({});
    expect(validator.validate('registerItem', { branchId: '01', reRegister: true })).toEqual({
      branchId: '01',
      reRegister: true,
    });
    expectRefused(() => validator.validate('registerItem', { branchId: '' }), 'branchId', /empty/);
    expectRefused(
      () => validator.validate('registerItem', { reRegister: 'yes' as unknown as boolean }),
      'reRegister',
      /boolean/,
    );
  });
});

describe('listPurchases', () => {
  it('pageSize: 1 and 100 pass, 0, 101 and fractions do not', () => {
    expect(validator.validate('listPurchases', { pageSize: 1 }).pageSize).toBe(1);
    expect(validator.validate('listPurchases', { pageSize: 100 }).pageSize).toBe(100);
    expectRefused(() => validator.validate('listPurchases', { pageSize: 0 }), 'pageSize', /between 1 and 100/);
    expectRefused(() => validator.validate('listPurchases', { pageSize: 101 }), 'pageSize', /between 1 and 100/);
    expectRefused(() => validator.validate('listPurchases', { pageSize: 20.5 }), 'pageSize', /whole/);
  });

  it('dates are real dates and the range is not reversed', () => {
    expect(validator.validate('listPurchases', { fromDate: '2025-01-01', toDate: '2025-01-01' })).toMatchObject({
      fromDate: '2025-01-01',
    });
    expectRefused(() => validator.validate('listPurchases', { fromDate: '2025-01-32' }), 'fromDate', /calendar/);
    expectRefused(() => validator.validate('listPurchases', { toDate: 'yesterday' }), 'toDate', /YYYY-MM-DD/);
    expectRefused(
      () => validator.validate('listPurchases', { fromDate: '2025-02-01', toDate: '2025-01-31' }),
      'toDate',
      /fromDate/,
    );
  });

  it('cursor, when given, is not empty', () => {
    expect(validator.validate('listPurchases', { cursor: 'opaque==' }).cursor).toBe('opaque==');
    expectRefused(() => validator.validate('listPurchases', { cursor: '' }), 'cursor', /empty/);
  });
});

describe('Idempotency-Key', () => {
  it('8 and 128 characters pass, 7 and 129 do not', () => {
    expect(validateIdempotencyKey('createSale', 'a'.repeat(8))).toHaveLength(8);
    expect(validateIdempotencyKey('createSale', 'a'.repeat(128))).toHaveLength(128);
    expectRefused(() => validateIdempotencyKey('createSale', 'a'.repeat(7)), 'Idempotency-Key', /8 to 128/);
    expectRefused(() => validateIdempotencyKey('createSale', 'a'.repeat(129)), 'Idempotency-Key', /8 to 128/);
    expectRefused(() => validateIdempotencyKey('createSale', ''), 'Idempotency-Key', /required/);
  });

  it('allows only [A-Za-z0-9._:-]', () => {
    expect(validateIdempotencyKey('createCreditNote', 'sale:biz_1:INV-1.v2')).toBe('sale:biz_1:INV-1.v2');
    for (const bad of ['has space1', 'slash/abcdef', 'unicode-ключ', 'plus+abcdef', 'comma,abcdef']) {
      expectRefused(() => validateIdempotencyKey('createCreditNote', bad), 'Idempotency-Key', /only letters/);
    }
    expect(refusal(() => validateIdempotencyKey('createCreditNote', 'x')).operation).toBe('createCreditNote');
  });
});

describe('path ids', () => {
  it('must be non-empty strings', () => {
    expect(validatePathId('getSale', 'saleId', 'a/b c')).toBe('a/b c');
    expectRefused(() => validatePathId('getSale', 'saleId', ''), 'saleId', /empty/);
    expectRefused(() => validatePathId('getSale', 'saleId', '  '), 'saleId', /empty/);
    expectRefused(() => validatePathId('getSale', 'saleId', undefined), 'saleId', /required/);
    expectRefused(() => validatePathId('registerItem', 'itemId', 42), 'itemId', /string/);
  });
});
