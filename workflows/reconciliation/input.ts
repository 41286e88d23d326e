import type { ReconciliationInput } from '../../src/contracts/reconciliation.js';
import { dayNumber } from '../../src/reconciliation/rules.js';

/** Plain-JSON starts (CLI, schedules edited by hand) skip every client-side check: the workflow checks again. */
export function invalidInput(input: ReconciliationInput): string | undefined {
  if (typeof input !== 'object' || input === null) return 'the input must be an object {businessId, companyId}';
  for (const key of ['businessId', 'companyId'] as const) {
    if (typeof input[key] !== 'string' || input[key].trim() === '') return `${key} must be a non-empty string`;
  }
  // The rules run in this workflow: what they would refuse is refused here, before any request.
  if (
    input.asOf !== undefined &&
    !(typeof input.asOf === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(input.asOf) && dayNumber(input.asOf) !== undefined)
  ) {
    return 'asOf must be a date YYYY-MM-DD';
  }
  for (const key of ['amountTolerance', 'dateWindowDays'] as const) {
    const value = input.options?.[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0))
      return `options.${key} must be a number of at least 0`;
  }
  const currency = input.options?.currency;
  if (currency !== undefined && !(typeof currency === 'string' && currency.trim() !== ''))
    return 'options.currency must be a currency code such as KES';
  return undefined;
}
