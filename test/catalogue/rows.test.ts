import { describe, expect, it } from 'vitest';
import { checkCodes, type ServiceCodes } from '../../src/catalogue/codes.js';
import { formatOf, readCatalogue } from '../../src/catalogue/rows.js';
import { ITEM_FIELD_MAX_LENGTH } from '../../src/contracts/compliance-rules.js';
import { ItemCreateRequestSchema } from '../../sandbox/compliance/requests.js';

/** A file's bytes, as the CLI reads them. */
const csv = (...lines: string[]) => Buffer.from(lines.join('\n') + '\n');
const json = (text: string) => Buffer.from(text);

describe('a catalogue file read', () => {
  it('reads CSV cells as the row fields: empty cells absent, numbers and yes/no typed, a BOM ignored', () => {
    const read = readCatalogue(
      Buffer.concat([
        Buffer.from('\uFEFF'),
        csv(
          'externalId,name,taxTypeCode,unitPrice,stockTracked,productTypeCode',
          'SKU-1,Sugar 2kg,B,250.50,no,',
          '"SKU-2","Flour, 2kg",B,0,yes,2',
        ),
      ]),
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

  it('says what a yes/no cell takes in CSV words, and in JSON terms for JSON', () => {
    expect(
      readCatalogue(csv('externalId,name,taxTypeCode,unitPrice,stockTracked', 'A,x,B,1,Y'), 'csv').problems,
    ).toEqual([{ line: 2, column: 'stockTracked', reason: 'must be yes or no (or true / false, 1 / 0)' }]);
    const items = [{ externalId: 'A', name: 'x', taxTypeCode: 'B', unitPrice: 1, stockTracked: 'Y' }];
    expect(readCatalogue(json(JSON.stringify(items)), 'json').problems).toEqual([
      { line: 1, column: 'stockTracked', reason: 'must be a boolean' },
    ]);
  });

  it('refuses a 299-character name before anything is sent, naming its line, its column and the bound', () => {
    const read = readCatalogue(
      csv('externalId,name,taxTypeCode,unitPrice', 'SKU-1,Sugar,B,10', `SKU-2,${'n'.repeat(299)},B,10`),
      'csv',
    );
    expect(read.problems).toEqual([{ line: 3, column: 'name', reason: 'must be at most 200 characters (it has 299)' }]);
    expect(read.rows.map((r) => r.line)).toEqual([2]);
  });

  it('takes each item field at the length the service takes, and names it one character longer, as the sandbox does', () => {
    const row = (length: (max: number) => number) => ({
      externalId: 'SKU-1',
      name: 'Sugar',
      taxTypeCode: 'B',
      unitPrice: 10,
      ...Object.fromEntries(
        Object.entries(ITEM_FIELD_MAX_LENGTH).map(([field, max]) => [field, 'x'.repeat(length(max))]),
      ),
    });
    const read = readCatalogue(json(JSON.stringify([row((max) => max), row((max) => max + 1)])), 'json');
    expect(read.rows.map((r) => r.line)).toEqual([1]);
    expect(read.problems).toEqual(
      Object.entries(ITEM_FIELD_MAX_LENGTH).map(([column, max]) => ({
        line: 2,
        column,
        reason: `must be at most ${max} characters (it has ${max + 1})`,
      })),
    );
    // The sandbox, which reads the same bounds from its own side, takes the first row and refuses the second.
    const { branchId: _, ...fields } = read.rows[0]!.row;
    expect(ItemCreateRequestSchema.safeParse(fields).success).toBe(true);
    for (const field of Object.keys(ITEM_FIELD_MAX_LENGTH)) {
      const longer = {
        ...fields,
        [field]: 'x'.repeat(ITEM_FIELD_MAX_LENGTH[field as keyof typeof ITEM_FIELD_MAX_LENGTH] + 1),
      };
      expect(ItemCreateRequestSchema.safeParse(longer).success, field).toBe(false);
    }
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

  it('reads UTF-8 bytes, and names each line that is not UTF-8 while checking the rest', () => {
    const bytes = (...parts: Array<string | number[]>) =>
      Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));
    const good = readCatalogue(csv('externalId,name,taxTypeCode,unitPrice', 'A,Café crème 250g,B,1'), 'csv');
    expect(good.problems).toEqual([]);
    expect(good.rows[0]!.row.name).toBe('Café crème 250g');

    const latin1 = readCatalogue(
      bytes('externalId,name,taxTypeCode,unitPrice\nA,Caf', [0xe9], ',B,1\nB,,B,1\nC,', [0xa3], '5 note,B,1\n'),
      'csv',
    );
    const save = 'save the file as UTF-8 (in Excel: "CSV UTF-8")';
    expect(latin1.problems).toEqual([
      { line: 2, column: '(row)', reason: `is not UTF-8: ${save}` },
      { line: 4, column: '(row)', reason: `is not UTF-8: ${save}` },
      { line: 3, column: 'name', reason: 'is required' },
    ]);

    const utf16 = readCatalogue(bytes([0xff, 0xfe], Buffer.from('externalId,name\n', 'utf16le').toJSON().data), 'csv');
    expect(utf16.problems).toEqual([{ line: 0, column: '(file)', reason: `is UTF-16, not UTF-8: ${save}` }]);
    const notUtf8Json = readCatalogue(
      bytes('[\n{"externalId":"A","name":"Caf', [0xe9], '","taxTypeCode":"B","unitPrice":1}]'),
      'json',
    );
    expect(notUtf8Json.problems).toEqual([
      { line: 0, column: '(file)', reason: 'is not UTF-8 (line 2 of the file): save the file as UTF-8' },
    ]);
    expect(notUtf8Json.rows).toEqual([]);
    // A line with bytes that are not UTF-8 is no row to import, even when its garbled cells pass.
    expect(latin1.rows).toEqual([]);
    const manyLines = Array.from({ length: 12 }, () => bytes('{"name":"Caf', [0xe9], '"}\n'));
    const many = readCatalogue(Buffer.concat([Buffer.from('[\n'), ...manyLines, Buffer.from(']')]), 'json');
    expect(many.problems[0]!.reason).toBe(
      'is not UTF-8 (lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more of the file): save the file as UTF-8',
    );
  });

  it('names a column given twice, a known column written another way, and rows with too many or too few cells', () => {
    const read = readCatalogue(
      csv(
        'ExternalID,name,taxType,unit_price,name',
        'A,Milk,B,60,Milk',
        'B,Bread,B,50',
        'C,Milk, 1L,B,70,Milk',
        'D,Oil,B,90,Oil',
      ),
      'csv',
    );
    expect(read.problems).toEqual([
      { line: 1, column: 'ExternalID', reason: 'is not a known column (did you mean externalId?)' },
      { line: 1, column: 'taxType', reason: 'is not a known column (did you mean taxTypeCode?)' },
      { line: 1, column: 'unit_price', reason: 'is not a known column (did you mean unitPrice?)' },
      { line: 1, column: 'name', reason: 'is named more than once' },
      { line: 3, column: '(row)', reason: 'has 4 cells where the header has 5: an empty cell still needs its comma' },
      { line: 4, column: '(row)', reason: 'has 6 cells where the header has 5: a cell holding a comma needs quotes' },
      { line: 2, column: 'externalId', reason: 'is required' },
      { line: 2, column: 'taxTypeCode', reason: 'is required' },
      { line: 2, column: 'unitPrice', reason: 'is required' },
      { line: 5, column: 'externalId', reason: 'is required' },
      { line: 5, column: 'taxTypeCode', reason: 'is required' },
      { line: 5, column: 'unitPrice', reason: 'is required' },
    ]);
  });

  it('reads JSON as an array of rows or {"items": [...]}, each named by its number', () => {
    const items = [
      { externalId: 'A', name: 'Milk', taxTypeCode: 'B', unitPrice: 60 },
      { externalId: 'B', name: 'Oil', taxTypeCode: 'B', unitPrice: '60', size: 'L' },
      'not an item',
    ];
    for (const text of [JSON.stringify(items), JSON.stringify({ items })]) {
      const read = readCatalogue(json(text), 'json');
      expect(read.rows.map((r) => r.line)).toEqual([1]);
      expect(read.problems).toEqual([
        { line: 2, column: 'size', reason: 'is not a known field' },
        { line: 2, column: 'unitPrice', reason: 'must be a number' },
        { line: 3, column: '(input)', reason: 'must be an object' },
      ]);
    }
  });

  it('says what is wrong with a file that has no rows to read', () => {
    expect(readCatalogue(json('{"items": 3}'), 'json').problems).toEqual([
      { line: 0, column: '(file)', reason: 'must be a JSON array of items, or {"items": [...]}' },
    ]);
    expect(readCatalogue(json('['), 'json').problems).toEqual([
      { line: 0, column: '(file)', reason: 'is not valid JSON' },
    ]);
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
    expect(readCatalogue(json(JSON.stringify(tooMany)), 'json').problems).toEqual([
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
