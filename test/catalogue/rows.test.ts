import { describe, expect, it } from 'vitest';
import { checkCodes, type ServiceCodes } from '../../src/catalogue/codes.js';
import { formatOf, readCatalogue } from '../../src/catalogue/rows.js';

const csv = (...lines: string[]) => lines.join('\n') + '\n';

describe('a catalogue file read', () => {
  it('reads CSV cells as the row fields: empty cells absent, numbers and yes/no typed, a BOM ignored', () => {
    const read = readCatalogue(
      '\uFEFF' +
        csv(
          'externalId,name,taxTypeCode,unitPrice,stockTracked,productTypeCode',
          'SKU-1,Sugar 2kg,B,250.50,no,',
          '"SKU-2","Flour, 2kg",B,0,yes,2',
        ),
      'csv',
    );
    expect(read.problems).toEqual([]);
    expect(read.rows).toEqual([
      {
        line: 2,
        row: { externalId: 'SKU-1', name: 'Sugar 2kg', taxTypeCode: 'B', unitPrice: 250.5, stockTracked: false },
      },
      {
        line: 3,
        row: {
          externalId: 'SKU-2',
          name: 'Flour, 2kg',
          taxTypeCode: 'B',
          unitPrice: 0,
          stockTracked: true,
          productTypeCode: '2',
        },
      },
    ]);
  });

  it('names every problem by line and column at once: an unknown column once, on the header', () => {
    const read = readCatalogue(
      csv(
        'externalId,name,taxTypeCode,unitPrice,colour',
        'SKU-1,Sugar,B,1200,red',
        'SKU-2,,B,"1,200",blue',
        'SKU-1,Sugar again,B,-1,green',
      ),
      'csv',
    );
    expect(read.problems).toEqual([
      { line: 1, column: 'colour', reason: 'is not a known column' },
      { line: 3, column: 'name', reason: 'is required' },
      { line: 3, column: 'unitPrice', reason: 'must be a number' },
      { line: 4, column: 'unitPrice', reason: 'must be 0 or more' },
    ]);
    expect(read.rows.map((r) => r.line)).toEqual([2]);
  });

  it('refuses a second row with the same externalId, naming the first', () => {
    const read = readCatalogue(csv('externalId,name,taxTypeCode,unitPrice', 'A,x,B,1', 'B,y,B,1', 'A,z,B,1'), 'csv');
    expect(read.problems).toEqual([{ line: 4, column: 'externalId', reason: 'is already on line 2' }]);
  });

  it('gives the physical line of a row after a quoted line break, and says where CSV breaks', () => {
    const read = readCatalogue(csv('externalId,name,taxTypeCode,unitPrice', 'A,"two', 'lines",B,1', 'B,,B,1'), 'csv');
    expect(read.problems).toEqual([{ line: 4, column: 'name', reason: 'is required' }]);
    const broken = readCatalogue(csv('externalId,name,taxTypeCode,unitPrice', 'A,"open,B,1'), 'csv');
    expect(broken.problems).toHaveLength(1);
    expect(broken.problems[0]).toMatchObject({ column: '(file)' });
    expect(broken.problems[0]!.reason).toMatch(/^is not valid CSV/);
  });

  it('reads JSON as an array of rows or {"items": [...]}, each named by its number', () => {
    const items = [
      { externalId: 'A', name: 'Milk', taxTypeCode: 'B', unitPrice: 60 },
      { externalId: 'B', name: 'Oil', taxTypeCode: 'B', unitPrice: '60', size: 'L' },
      'not an item',
    ];
    for (const text of [JSON.stringify(items), JSON.stringify({ items })]) {
      const read = readCatalogue(text, 'json');
      expect(read.rows.map((r) => r.line)).toEqual([1]);
      expect(read.problems).toEqual([
        { line: 2, column: 'size', reason: 'is not a known field' },
        { line: 2, column: 'unitPrice', reason: 'must be a number' },
        { line: 3, column: '(input)', reason: 'must be an object' },
      ]);
    }
  });

  it('says what is wrong with a file that has no rows to read', () => {
    expect(readCatalogue('{"items": 3}', 'json').problems).toEqual([
      { line: 0, column: '(file)', reason: 'must be a JSON array of items, or {"items": [...]}' },
    ]);
    expect(readCatalogue('[', 'json').problems).toEqual([{ line: 0, column: '(file)', reason: 'is not valid JSON' }]);
    expect(readCatalogue(csv('externalId,name,taxTypeCode,unitPrice'), 'csv').problems).toEqual([
      { line: 0, column: '(file)', reason: 'has no rows' },
    ]);
    expect([formatOf('items.CSV'), formatOf('items.json'), formatOf('items.xlsx')]).toEqual(['csv', 'json', undefined]);
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({
      externalId: `X${i}`,
      name: 'x',
      taxTypeCode: 'B',
      unitPrice: 1,
    }));
    expect(readCatalogue(JSON.stringify(tooMany), 'json').problems).toEqual([
      {
        line: 0,
        column: '(file)',
        reason: 'has 10001 rows: an import takes at most 10000 (import a larger catalogue as several files)',
      },
    ]);
  });
});

describe("a catalogue's codes against the service's", () => {
  const codes: ServiceCodes = {
    lists: new Map([
      ['taxType', new Set(['A', 'B'])],
      ['productType', new Set(['1', '2'])],
      ['quantityUnit', new Set(['U', 'KG'])],
    ]),
    classifications: new Set(['5016150100']),
  };

  it('names each unknown code, in rows that are wrong otherwise too; a list the service lacks is not checked', () => {
    const read = readCatalogue(
      csv(
        'externalId,name,taxTypeCode,unitPrice,unitCode,productTypeCode,classificationCode,packagingUnitCode',
        'A,Milk,B,60,U,2,5016150100,ZZ',
        'B,,Z,-1,LTR,9,123,',
      ),
      'csv',
    );
    expect(checkCodes(read.records, codes)).toEqual([
      { line: 3, column: 'taxTypeCode', reason: "is not a code of the service's taxType list" },
      { line: 3, column: 'productTypeCode', reason: "is not a code of the service's productType list" },
      { line: 3, column: 'unitCode', reason: "is not a code of the service's quantityUnit list" },
      { line: 3, column: 'classificationCode', reason: 'is not an item classification of the service' },
    ]);
  });
});
