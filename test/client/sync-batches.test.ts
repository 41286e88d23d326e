import { describe, expect, it } from 'vitest';
import { SaleInputError } from '../../src/client/errors.js';
import { parseSyncBatchInput } from '../../src/client/sync-batches.js';

function problem(input: unknown): string {
  try {
    parseSyncBatchInput(input);
  } catch (err) {
    expect(err).toBeInstanceOf(SaleInputError);
    return `${(err as SaleInputError).field} ${(err as SaleInputError).reason}`;
  }
  throw new Error('accepted');
}

describe('parseSyncBatchInput', () => {
  it('accepts a batch id with optional company, bill payment ids and options', () => {
    const input = {
      syncBatchId: 'sb_1',
      companyId: 'cmp_1',
      billPaymentIds: ['bp_1'],
      options: { pollInterval: '5 seconds', pageSize: 50 },
    };
    expect(parseSyncBatchInput(input)).toEqual(input);
  });

  it('names the wrong field', () => {
    expect(problem({})).toMatch(/^syncBatchId /);
    expect(problem({ syncBatchId: ' ' })).toBe('syncBatchId must not be empty');
    expect(problem({ syncBatchId: 'sb', billPaymentIds: [] })).toBe(
      'billPaymentIds must name at least one bill payment',
    );
    expect(problem({ syncBatchId: 'sb', options: { pollInterval: 'soon' } })).toMatch(
      /^options.pollInterval must be a duration/,
    );
    expect(problem({ syncBatchId: 'sb', options: { pageSize: 500 } })).toMatch(/^options.pageSize /);
    // `continued` is the workflow's own: a caller cannot hand it a state.
    expect(problem({ syncBatchId: 'sb', continued: {} })).toBe('continued is not a known field');
  });
});
