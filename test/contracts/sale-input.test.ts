import { describe, expect, it } from 'vitest';
import {
  checkInput,
  checkSaleInput,
  describeProblems,
  saleInputDifferences,
  saleSchemas,
  type InputProblem,
} from '../../src/contracts/sale-input.js';
import type { SaleInput } from '../../src/contracts/sale.js';

const { awaitReceiptRequest, cancelArgs, refundRequest } = saleSchemas();

function sale(): SaleInput {
  return {
    businessId: 'biz_demo_nairobi',
    traderInvoiceNumber: 'INV-7',
    saleDate: '2025-01-15',
    customer: { name: 'Wanjiku', pin: 'A123456789Z' },
    lines: [
      { itemId: 'ITEM-1', quantity: 2, unitPrice: 150.5 },
      { itemId: 'ITEM-2', quantity: 0.25, unitPrice: 1999.9999 },
    ],
    options: { refundWindowDays: 30, outcomeTimeout: '24 hours' },
  };
}

function problemsOf(value: unknown): InputProblem[] {
  const checked = checkSaleInput(value);
  if (checked.ok) throw new Error('expected the sale input to be refused');
  return checked.problems;
}

describe('checkSaleInput', () => {
  it('accepts a valid sale input, unchanged', () => {
    expect(checkSaleInput(sale())).toEqual({ ok: true, value: sale() });
  });

  it('refuses a sale without lines (what a plain JSON start may send), naming the field', () => {
    const { lines: _lines, ...withoutLines } = sale();
    expect(problemsOf(withoutLines)).toEqual([{ field: 'lines', reason: 'is required' }]);
  });

  it('refuses a line whose quantity × unitPrice would overflow, naming the bound, not the product', () => {
    const input = { ...sale(), lines: [{ itemId: 'ITEM-1', quantity: 1e200, unitPrice: 1e200 }] };
    expect(problemsOf(input)).toEqual([
      { field: 'lines[0].quantity', reason: 'must be at most 1000000' },
      { field: 'lines[0].unitPrice', reason: 'must be at most 1000000000' },
    ]);
  });

  it('refuses a line amount and a sale total beyond the bounds', () => {
    expect(
      problemsOf({ ...sale(), lines: [{ itemId: 'ITEM-1', quantity: 1_000_000, unitPrice: 1_000_000_000 }] }),
    ).toEqual([{ field: 'lines[0]', reason: 'quantity × unitPrice must be at most 1000000000000' }]);
    const lines = Array.from({ length: 11 }, () => ({ itemId: 'ITEM-1', quantity: 1_000, unitPrice: 999_999_999 }));
    expect(problemsOf({ ...sale(), lines })).toEqual([
      { field: 'lines', reason: 'must total at most 10000000000000 (quantity × unitPrice summed)' },
    ]);
  });

  it('accepts each bound at its edge', () => {
    const lines = [
      { itemId: 'ITEM-1', quantity: 1_000_000, unitPrice: 1_000_000 },
      { itemId: 'ITEM-2', quantity: 0.0001, unitPrice: 1_000_000_000 },
      { itemId: 'ITEM-3', quantity: 1_000, unitPrice: 999_999_999.9999 },
    ];
    expect(checkSaleInput({ ...sale(), lines }).ok).toBe(true);
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
  ])('refuses a non-finite quantity (%s)', (_name, quantity) => {
    expect(problemsOf({ ...sale(), lines: [{ itemId: 'ITEM-1', quantity, unitPrice: 1 }] })).toEqual([
      { field: 'lines[0].quantity', reason: 'must be a finite number' },
    ]);
  });

  it.each([
    [1.00001, 'must have at most 4 decimal places'],
    [1e-7, 'must have at most 4 decimal places'],
    [0.1 + 0.2, 'must have at most 4 decimal places'],
  ])('refuses a unit price of %s with too many decimals', (unitPrice, reason) => {
    expect(problemsOf({ ...sale(), lines: [{ itemId: 'ITEM-1', quantity: 1, unitPrice }] })).toEqual([
      { field: 'lines[0].unitPrice', reason },
    ]);
  });

  it('names an unknown field first, before the required field it was meant to be', () => {
    const input = { ...sale(), lines: [{ itemId: 'ITEM-1', quantitty: 2, unitPrice: 1 }], tradeInvoiceNumber: 'INV-7' };
    expect(problemsOf(input)).toEqual([
      { field: 'lines[0].quantitty', reason: 'is not a known field' },
      { field: 'tradeInvoiceNumber', reason: 'is not a known field' },
      { field: 'lines[0].quantity', reason: 'is required' },
    ]);
  });

  it.each([
    ['24', "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'"],
    ['-5m', "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'"],
    ['0s', 'must be longer than 0'],
  ])('refuses a bad duration %j', (outcomeTimeout, reason) => {
    expect(problemsOf({ ...sale(), options: { outcomeTimeout } })).toEqual([
      { field: 'options.outcomeTimeout', reason },
    ]);
  });

  it.each([null, 'sale', 42, []])('refuses %j as a whole', (input) => {
    expect(problemsOf(input)).toEqual([{ field: '(input)', reason: 'must be an object' }]);
  });
});

describe('the other inputs of a sale', () => {
  it('awaitReceipt: a wait more than 0 and at most 10 minutes, an input that is a sale input', () => {
    expect(checkInput(awaitReceiptRequest, {})).toEqual({ ok: true, value: {} });
    expect(checkInput(awaitReceiptRequest, { wait: '10 minutes', input: sale() }).ok).toBe(true);
    expect(checkInput(awaitReceiptRequest, { wait: '601s' })).toEqual({
      ok: false,
      problems: [{ field: 'wait', reason: 'must be at most 10 minutes' }],
    });
    expect(checkInput(awaitReceiptRequest, { wait: '0 seconds' })).toMatchObject({
      problems: [{ field: 'wait', reason: 'must be longer than 0' }],
    });
    expect(checkInput(awaitReceiptRequest, { input: { ...sale(), lines: [] } })).toMatchObject({
      problems: [{ field: 'input.lines', reason: 'must have at least 1 line' }],
    });
    expect(checkInput(awaitReceiptRequest, { timeout: '1m' })).toMatchObject({
      problems: [{ field: 'timeout', reason: 'is not a known field' }],
    });
  });

  it('cancel: a reason is required (what an empty update form sends)', () => {
    expect(checkInput(cancelArgs, undefined)).toEqual({
      ok: false,
      problems: [{ field: '(input)', reason: 'is required' }],
    });
    expect(checkInput(cancelArgs, {})).toEqual({
      ok: false,
      problems: [{ field: 'reason', reason: 'is required' }],
    });
    expect(checkInput(cancelArgs, { reason: 'customer left' })).toEqual({
      ok: true,
      value: { reason: 'customer left' },
    });
  });

  it('refund: a reason code from the contract', () => {
    expect(
      checkInput(refundRequest, { reason: '07', returnDate: '2025-01-16', traderInvoiceNumber: 'CN-1' }),
    ).toMatchObject({
      problems: [{ field: 'reason', reason: 'must be one of 01, 02, 03, 04, 05, 06' }],
    });
  });
});

describe('describeProblems', () => {
  it('names the first problem and counts the rest', () => {
    expect(describeProblems('sale input', [{ field: 'lines', reason: 'is required' }])).toBe(
      'invalid sale input: lines is required',
    );
    expect(
      describeProblems('sale input', [
        { field: 'lines', reason: 'is required' },
        { field: 'saleDate', reason: 'is required' },
      ]),
    ).toBe('invalid sale input: lines is required (and 1 more problem)');
    expect(
      describeProblems('cancel request', [
        { field: 'reason', reason: 'is required' },
        { field: 'a', reason: 'is not a known field' },
        { field: 'b', reason: 'is not a known field' },
      ]),
    ).toBe('invalid cancel request: reason is required (and 2 more problems)');
  });
});

describe('saleInputDifferences', () => {
  it('finds none between an input and itself, whatever the key order or absent-versus-undefined', () => {
    const started = sale();
    const reversed = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reversed)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([k, v]) => [k, reversed(v)]),
            )
          : value;
    const reordered = reversed(started) as SaleInput;
    expect(Object.keys(reordered)[0]).toBe('options');
    expect(saleInputDifferences(started, reordered)).toEqual([]);
    expect(saleInputDifferences(started, { ...sale(), branchId: undefined, paymentTypeCode: undefined })).toEqual([]);
    const {
      lines: [first, second],
    } = sale();
    expect(
      saleInputDifferences(started, { ...sale(), lines: [{ ...first!, description: undefined }, second!] }),
    ).toEqual([]);
  });

  it('names each differing field by its path, never its value', () => {
    const asked = sale();
    asked.lines[1]!.quantity = 3;
    asked.customer = { name: 'Achieng Otieno', pin: 'A123456789Z' };
    asked.options = { ...asked.options, refundWindowDays: 14 };
    asked.paymentTypeCode = '02';
    const differences = saleInputDifferences(sale(), asked);
    expect(differences).toEqual(['customer.name', 'lines[1].quantity', 'options.refundWindowDays', 'paymentTypeCode']);
    expect(differences.join(' ')).not.toMatch(/Achieng|Wanjiku|14|30/);
  });

  it('names the lines as a whole when their count differs', () => {
    const asked = sale();
    asked.lines.push({ itemId: 'ITEM-3', quantity: 1, unitPrice: 5 });
    expect(saleInputDifferences(sale(), asked)).toEqual(['lines']);
  });

  it('names the fields of an object present on one side only', () => {
    const { customer: _customer, ...withoutCustomer } = sale();
    expect(saleInputDifferences(sale(), withoutCustomer)).toEqual(['customer.name', 'customer.pin']);
    expect(saleInputDifferences(withoutCustomer, sale())).toEqual(['customer.name', 'customer.pin']);
  });
});

describe('a business id keeps the sale’s workflow id within the 255 characters Temporal’s SQL stores hold', () => {
  it('takes 199 characters of emoji and refuses 200, naming the field', async () => {
    const { checkSaleInput } = await import('../../src/contracts/sale-input.js');
    const input = (businessId: string) => ({
      businessId,
      traderInvoiceNumber: 'INV-1',
      saleDate: '2026-11-22',
      lines: [{ itemId: 'itm_1', quantity: 1, unitPrice: 1 }],
    });
    expect(checkSaleInput(input('😀'.repeat(199))).ok).toBe(true);
    const refused = checkSaleInput(input('😀'.repeat(200)));
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.problems[0]).toMatchObject({
        field: 'businessId',
        reason: expect.stringMatching(/at most 199 characters/),
      });
  });
});
