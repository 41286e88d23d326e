import { describe, expect, it } from 'vitest';
import { TAX_BANDS, isTaxTypeCode, lineAmounts, roundHalfUp, sumTotals } from '../../../sandbox/compliance/tax.js';

describe('TAX_BANDS', () => {
  it('has the Kenyan VAT rates per eTIMS letter', () => {
    expect(Object.fromEntries(Object.entries(TAX_BANDS).map(([code, band]) => [code, band.rate]))).toEqual({
      A: 0,
      B: 16,
      C: 0,
      D: 0,
      E: 8,
    });
    expect(Object.isFrozen(TAX_BANDS)).toBe(true);
  });

  it('recognises only the five letters', () => {
    expect(['A', 'B', 'C', 'D', 'E'].every(isTaxTypeCode)).toBe(true);
    expect(['b', 'F', '', 'toString', 'AB'].some(isTaxTypeCode)).toBe(false);
  });
});

describe('roundHalfUp', () => {
  it.each([
    [1.005, 2, 1.01], // binary 1.005 is just below; plain Math.round gives 1.00
    [2.675, 2, 2.68],
    [1.0005, 3, 1.001],
    [0.125, 2, 0.13],
    [1.45, 1, 1.5],
    [2.345, 1, 2.3],
    [123.5, 0, 124],
    [1.004999, 2, 1],
    [100, 2, 100],
    [1e-7, 2, 0],
    [1.5e21, 2, 1.5e21],
  ])('rounds %d to %d decimals as %d', (value, decimals, expected) => {
    expect(roundHalfUp(value, decimals)).toBe(expected);
  });

  it('is symmetric for negatives and never returns -0', () => {
    expect(roundHalfUp(-1.005)).toBe(-1.01);
    expect(roundHalfUp(-2.675)).toBe(-2.68);
    expect(roundHalfUp(-0.125)).toBe(-0.13);
    expect(Object.is(roundHalfUp(-0.004), 0)).toBe(true);
  });

  it('defaults to 2 decimals', () => {
    expect(roundHalfUp(10.555)).toBe(10.56);
  });

  it('rejects non-finite values and bad decimals', () => {
    expect(() => roundHalfUp(Number.NaN)).toThrow(/value must be a finite number/);
    expect(() => roundHalfUp(Infinity)).toThrow(/value/);
    expect(() => roundHalfUp(1, -1)).toThrow(/decimals/);
    expect(() => roundHalfUp(1, 1.5)).toThrow(/decimals/);
  });
});

describe('lineAmounts', () => {
  // Expected values worked out by hand in cents: tax = total × rate / (100 + rate), halves up.
  it.each([
    // quantity, unitPrice, band, total, taxable, tax        working
    [1, 100, 'B', 100, 86.21, 13.79], // 10000 × 16 / 116 = 1379.31
    [1, 0.05, 'B', 0.05, 0.04, 0.01], // 5 × 16 / 116 = 0.69 → 1
    [1, 0.03, 'B', 0.03, 0.03, 0], // 3 × 16 / 116 = 0.41 → 0
    [1, 0.07, 'B', 0.07, 0.06, 0.01], // 7 × 16 / 116 = 0.97 → 1
    [1, 1160, 'B', 1160, 1000, 160], // 116000 × 16 / 116 = 16000
    [1, 108, 'E', 108, 100, 8], // 10800 × 8 / 108 = 800
    [2, 54, 'E', 108, 100, 8],
    [1, 50, 'E', 50, 46.3, 3.7], // 5000 × 8 / 108 = 370.37
    [3, 33.335, 'B', 100.01, 86.22, 13.79], // 100.005 → 100.01; 10001 × 16 / 116 = 1379.45
    [2.5, 19.99, 'B', 49.98, 43.09, 6.89], // 49.975 → 49.98; 4998 × 16 / 116 = 689.38
    [0.5, 0.01, 'B', 0.01, 0.01, 0], // 0.005 → 0.01
    [0.1, 0.2, 'B', 0.02, 0.02, 0], // not 0.020000000000000004
  ])('%d × %d in band %s: total %d, taxable %d, tax %d', (quantity, unitPrice, band, total, taxable, tax) => {
    const amounts = lineAmounts(quantity, unitPrice, band);
    expect(amounts).toEqual({ total, taxableAmount: taxable, taxAmount: tax, taxRate: TAX_BANDS[band as 'B'].rate });
  });

  it('negates every amount for credit-note quantities', () => {
    expect(lineAmounts(-1, 100, 'B')).toEqual({ total: -100, taxableAmount: -86.21, taxAmount: -13.79, taxRate: 16 });
    expect(lineAmounts(-3, 33.335, 'B')).toEqual({
      total: -100.01,
      taxableAmount: -86.22,
      taxAmount: -13.79,
      taxRate: 16,
    });
    expect(lineAmounts(-1, 0.05, 'B')).toEqual({ total: -0.05, taxableAmount: -0.04, taxAmount: -0.01, taxRate: 16 });
    expect(lineAmounts(-1, 108, 'E')).toEqual({ total: -108, taxableAmount: -100, taxAmount: -8, taxRate: 8 });
  });

  it.each(['A', 'C', 'D'])('charges no tax in band %s', (band) => {
    expect(lineAmounts(3, 33.335, band)).toEqual({ total: 100.01, taxableAmount: 100.01, taxAmount: 0, taxRate: 0 });
  });

  it('keeps taxable + tax equal to the total to the cent, and the tax within half a cent of exact', () => {
    for (let cents = -2000; cents <= 2000; cents += 7) {
      for (const band of ['B', 'E'] as const) {
        const rate = TAX_BANDS[band].rate;
        const { total, taxableAmount, taxAmount } = lineAmounts(1, cents / 100, band);
        expect(Math.round(total * 100)).toBe(cents);
        expect(Math.round(taxableAmount * 100) + Math.round(taxAmount * 100)).toBe(cents);
        expect(Math.abs(taxAmount * 100 - (cents * rate) / (100 + rate))).toBeLessThanOrEqual(0.5 + 1e-9);
        // Results are whole cents.
        expect(Number.isInteger(Math.round(taxAmount * 100)) && taxAmount === Math.round(taxAmount * 100) / 100).toBe(
          true,
        );
      }
    }
  });

  it('rejects an unknown band and non-finite numbers, naming the field', () => {
    expect(() => lineAmounts(1, 1, 'F')).toThrow(/taxTypeCode/);
    expect(() => lineAmounts(Number.NaN, 1, 'B')).toThrow(/quantity/);
    expect(() => lineAmounts(1, Infinity, 'B')).toThrow(/unitPrice/);
  });
});

describe('sumTotals', () => {
  it('adds in cents, so 0.1 + 0.2 is 0.3', () => {
    const lines = [
      { total: 0.1, taxableAmount: 0.09, taxAmount: 0.01 },
      { total: 0.2, taxableAmount: 0.18, taxAmount: 0.02 },
    ];
    expect(sumTotals(lines)).toEqual({ total: 0.3, taxableAmount: 0.27, taxAmount: 0.03 });
  });

  it('sums real lines, including a mix of bands', () => {
    const lines = [lineAmounts(3, 33.335, 'B'), lineAmounts(1, 108, 'E'), lineAmounts(2, 10.5, 'A')];
    // 100.01 + 108 + 21 = 229.01; tax 13.79 + 8 + 0 = 21.79; taxable 86.22 + 100 + 21 = 207.22
    expect(sumTotals(lines)).toEqual({ total: 229.01, taxableAmount: 207.22, taxAmount: 21.79 });
  });

  it('sums credit-note lines to negative totals and an empty list to zero', () => {
    const lines = [lineAmounts(-1, 100, 'B'), lineAmounts(-2, 0.05, 'B')];
    // -100 → tax -13.79; -0.10 → 10 × 16 / 116 = 1.38 → tax -0.01
    expect(sumTotals(lines)).toEqual({ total: -100.1, taxableAmount: -86.3, taxAmount: -13.8 });
    expect(sumTotals([])).toEqual({ total: 0, taxableAmount: 0, taxAmount: 0 });
  });

  it('names the bad line', () => {
    expect(() =>
      sumTotals([
        { total: 1, taxableAmount: 1, taxAmount: 0 },
        { total: Number.NaN, taxableAmount: 0, taxAmount: 0 },
      ]),
    ).toThrow(/lines\[1\]\.total/);
  });
});
