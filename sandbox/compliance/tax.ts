/** Kenyan VAT bands as eTIMS tax type codes (contract decision C1). */
export type TaxTypeCode = 'A' | 'B' | 'C' | 'D' | 'E';

export const TAX_BANDS: Readonly<Record<TaxTypeCode, { rate: number; label: string }>> = Object.freeze({
  A: Object.freeze({ rate: 0, label: 'A-Exempt' }),
  B: Object.freeze({ rate: 16, label: 'B-16.00%' }),
  C: Object.freeze({ rate: 0, label: 'C-0%' }),
  D: Object.freeze({ rate: 0, label: 'D-Non-VAT' }),
  E: Object.freeze({ rate: 8, label: 'E-8.00%' }),
});

export function isTaxTypeCode(code: string): code is TaxTypeCode {
  return Object.hasOwn(TAX_BANDS, code);
}

/**
 * A finite number as an exact decimal: `units / 10^scale`. Built from the number's shortest
 * round-trip text, so 33.335 is 33335/10^3 and not the binary value just below it.
 */
interface Decimal {
  units: bigint;
  scale: number;
}

function toDecimal(value: number, name: string): Decimal {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${value}`);
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match) throw new RangeError(`${name} is not a decimal number: ${value}`);
  const [, sign = '', whole = '0', fraction = '', exponentText = '0'] = match;
  let units = BigInt(`${sign}${whole}${fraction}`);
  let scale = fraction.length - Number(exponentText);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units, scale };
}

/** numerator / denominator rounded to the nearest integer, halves away from zero. */
function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const rounded = (2n * n + d) / (2n * d);
  return negative ? -rounded : rounded;
}

function fromUnits(units: bigint, decimals: number): number {
  return Number(`${units}e-${decimals}`) + 0; // `+ 0` turns -0 into 0
}

/** `value` as whole units of 10^-decimals, rounded half away from zero. */
function toUnits(value: Decimal, decimals: number): bigint {
  if (value.scale <= decimals) return value.units * 10n ** BigInt(decimals - value.scale);
  return divideHalfUp(value.units, 10n ** BigInt(value.scale - decimals));
}

function assertDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 20) {
    throw new RangeError(`decimals must be an integer from 0 to 20, got ${decimals}`);
  }
}

/**
 * Rounds half away from zero on the decimal value as written (1.005 → 1.01, -1.005 → -1.01),
 * which plain `Math.round(x * 100) / 100` gets wrong for values like 1.005.
 */
export function roundHalfUp(value: number, decimals = 2): number {
  assertDecimals(decimals);
  return fromUnits(toUnits(toDecimal(value, 'value'), decimals), decimals);
}

const CENTS = 2;

function toCents(value: number, name: string): bigint {
  return toUnits(toDecimal(value, name), CENTS);
}

/**
 * Amounts of one line (contract decision C31): the line total is the tax-inclusive price, the VAT is
 * taken out of it. Credit notes pass negative quantities and get negative amounts.
 */
export function lineAmounts(
  quantity: number,
  unitPrice: number,
  taxTypeCode: string,
): { total: number; taxableAmount: number; taxAmount: number; taxRate: number } {
  if (!isTaxTypeCode(taxTypeCode)) {
    throw new RangeError(
      `taxTypeCode must be one of ${Object.keys(TAX_BANDS).join(', ')}, got ${JSON.stringify(taxTypeCode)}`,
    );
  }
  const taxRate = TAX_BANDS[taxTypeCode].rate;
  const q = toDecimal(quantity, 'quantity');
  const p = toDecimal(unitPrice, 'unitPrice');
  const totalCents = toUnits({ units: q.units * p.units, scale: q.scale + p.scale }, CENTS);
  const rate = toDecimal(taxRate, 'taxRate');
  const rateScale = 10n ** BigInt(rate.scale);
  // total × rate / (100 + rate), with the rate's own decimals cancelled out of the fraction.
  const taxCents = divideHalfUp(totalCents * rate.units, 100n * rateScale + rate.units);
  return {
    total: fromUnits(totalCents, CENTS),
    taxableAmount: fromUnits(totalCents - taxCents, CENTS),
    taxAmount: fromUnits(taxCents, CENTS),
    taxRate,
  };
}

/** Document totals as exact sums of the line amounts, in cents. */
export function sumTotals(lines: ReadonlyArray<{ total: number; taxableAmount: number; taxAmount: number }>): {
  total: number;
  taxableAmount: number;
  taxAmount: number;
} {
  let total = 0n;
  let taxableAmount = 0n;
  let taxAmount = 0n;
  lines.forEach((line, index) => {
    total += toCents(line.total, `lines[${index}].total`);
    taxableAmount += toCents(line.taxableAmount, `lines[${index}].taxableAmount`);
    taxAmount += toCents(line.taxAmount, `lines[${index}].taxAmount`);
  });
  return {
    total: fromUnits(total, CENTS),
    taxableAmount: fromUnits(taxableAmount, CENTS),
    taxAmount: fromUnits(taxAmount, CENTS),
  };
}
