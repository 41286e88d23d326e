import { describe, expect, it } from 'vitest';
import { passed, resultLine } from '../../tools/chaos/report.js';

const clean = { sales: 60, duplicates: 0, lost: 0, stockErrors: 0, creditNoteErrors: 0 };

describe('the chaos result line', () => {
  it('is the one line the issue asks for, and passes only with nothing wrong and everything settled', () => {
    expect(resultLine(clean, 12.34, 300)).toBe('chaos: 60 sales, 0 duplicate documents, 0 lost, 0 stock errors, 0 credit-note errors, settled in 12.3 s');
    expect(passed(clean, 12.34)).toBe(true);
    expect(passed(clean, null)).toBe(false);
    expect(resultLine(clean, null, 300)).toMatch(/, not settled within 300 s$/);
    for (const wrong of ['duplicates', 'lost', 'stockErrors', 'creditNoteErrors'] as const) {
      expect(passed({ ...clean, [wrong]: 1 }, 1)).toBe(false);
    }
  });
});
