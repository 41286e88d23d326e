import { describe, expect, it } from 'vitest';
import * as sandbox from '../../../sandbox/compliance/contract.js';
import * as worker from '../../../src/contracts/compliance-rules.js';

// The emulator and the worker read the contract separately; where they read the same value, they must agree.
describe('the sandbox and the worker read the compliance contract alike', () => {
  it('in-flight statuses, credit-note reasons and length limits', () => {
    expect(sandbox.IN_FLIGHT_STATUSES).toEqual(worker.IN_FLIGHT_STATUSES);
    expect(sandbox.CREDIT_NOTE_REASONS).toEqual(worker.CREDIT_NOTE_REASONS);
    expect(sandbox.TRADER_INVOICE_NUMBER_MAX).toBe(worker.TRADER_INVOICE_NUMBER_MAX);
    expect(sandbox.SALE_LINES_MAX).toBe(worker.SALE_LINES_MAX);
    for (const status of ['pending', 'retrying', 'completed', 'failed', 'unknown']) {
      expect(sandbox.isInFlight(status)).toBe(worker.isInFlight(status));
    }
  });
});
