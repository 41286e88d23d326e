import { describe, expect, it } from 'vitest';
import { reportCsv } from '../../src/catalogue/report.js';

describe('an import report as CSV', () => {
  it('writes a cell a spreadsheet would run as a formula as text, and every other cell as it is', () => {
    const csvText = reportCsv([
      { line: 2, externalId: 'SKU-1', outcome: 'registered', itemId: 'itm_1', reason: null },
      { line: 3, externalId: '=SKU-2', outcome: 'refused', itemId: null, reason: '=HYPERLINK("http://x","fix")' },
      { line: 4, externalId: 'SKU-3', outcome: 'conflict', itemId: 'itm_3', reason: '-held: name Milk, 1L' },
      { line: 5, externalId: 'SKU-4', outcome: 'refused', itemId: null, reason: 'name: @ is not allowed' },
    ]);
    expect(csvText.trim().split('\n')).toEqual([
      'line,externalId,outcome,itemId,reason',
      '2,SKU-1,registered,itm_1,',
      `3,'=SKU-2,refused,,"'=HYPERLINK(""http://x"",""fix"")"`,
      `4,SKU-3,conflict,itm_3,"'-held: name Milk, 1L"`,
      '5,SKU-4,refused,,name: @ is not allowed',
    ]);
  });
});
