import { describe, expect, it } from 'vitest';
import {
  MAPPINGS_CSV_ROWS_MAX,
  MappingsCsvError,
  mappingsCsvProblemText,
  mappingsFromCsv,
  mappingsToCsv,
} from '../../src/client/stock-in-csv.js';
import type { Mapping } from '../../src/contracts/stock-in.js';

const HEADER = 'supplierPin,by,key,itemId,factor,notStock,source';

function problems(csv: string): string[] {
  try {
    mappingsFromCsv(csv);
  } catch (err) {
    expect(err).toBeInstanceOf(MappingsCsvError);
    return (err as MappingsCsvError).problems.map(mappingsCsvProblemText);
  }
  throw new Error('imported');
}

const mappings: Mapping[] = [
  {
    supplierPin: 'P051234567X',
    by: 'description',
    key: 'Sugar 50kg bag',
    itemId: 'itm_sugar',
    factor: 50,
    source: 'merchant',
  },
  { supplierPin: 'P051234567X', by: 'code', key: 'DLV', notStock: true, source: 'learned' },
  // A cell holding the delimiter, a quote, a line break and text that is not ASCII.
  {
    supplierPin: 'A000000001B',
    by: 'description',
    key: 'Maziwa "Fresha", 500ml\nx24',
    itemId: 'itm,milk',
    factor: 0.5,
    source: 'learned',
  },
  // A supplier writes its own lines: one starting like a formula must not run as one in a spreadsheet.
  {
    supplierPin: 'A000000001B',
    by: 'description',
    key: '=HYPERLINK("http://x","y")',
    itemId: '+itm',
    factor: 1,
    source: 'merchant',
  },
  { supplierPin: 'A000000001B', by: 'code', key: '-20', itemId: '@itm', factor: 100_000, source: 'merchant' },
  { supplierPin: 'A000000001B', by: 'code', key: "'=A1", itemId: "'itm", factor: 2, source: 'merchant' },
];

describe('mappings CSV', () => {
  it('exports every mapping with its source, sorted, and imports them back as they were', () => {
    const csv = mappingsToCsv(mappings);
    const lines = csv.split('\n');
    expect(lines[0]).toBe(HEADER);
    expect(csv).toContain('P051234567X,code,DLV,,,true,learned');
    expect(csv).toContain('P051234567X,description,Sugar 50kg bag,itm_sugar,50,false,merchant');
    expect(csv).toContain(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csv).toContain(`A000000001B,code,'-20,'@itm,100000,false,merchant`);
    expect(csv).not.toMatch(/(^|,)[=+\-@]/m);

    const back = mappingsFromCsv(csv);
    const withoutSource = (list: readonly Mapping[]) =>
      list
        .map(({ source: _source, ...m }) => m)
        .sort((a, b) => `${a.supplierPin}${a.key}`.localeCompare(`${b.supplierPin}${b.key}`));
    expect(withoutSource(back.map((m) => ({ ...m, source: 'merchant' as const })))).toEqual(withoutSource(mappings));
    // Exported again: the same text.
    expect(mappingsToCsv(back.map((m) => ({ ...m, source: mappings.find((x) => x.key === m.key)!.source })))).toBe(csv);
  });

  it('takes a spreadsheet’s file: a byte order mark, CRLF, columns in any order, empty rows, yes/no, no source', () => {
    const csv =
      '\uFEFFby,supplierPin,key,notStock,itemId,factor\r\n' +
      'Description,P1,Sugar,no,itm_1,\r\n' +
      ',,,,,\r\n' +
      'code,P1,FEE,yes,,\r\n';
    expect(mappingsFromCsv(csv)).toEqual([
      { supplierPin: 'P1', by: 'description', key: 'Sugar', itemId: 'itm_1', factor: 1 },
      { supplierPin: 'P1', by: 'code', key: 'FEE', notStock: true },
    ]);
  });

  it('names every bad row and field, all at once, and imports nothing', () => {
    const csv = [
      HEADER,
      'P1,description,Sugar,itm_1,24,false,merchant',
      ',description,Salt,itm_2,,,',
      'P1,name,Tea,itm_3,,,',
      'P1,description,Milk,itm_4,0,,',
      'P1,description,Bread,itm_5,two,,',
      'P1,description,Fee,itm_6,,true,',
      'P1,description,Flour,,,,',
      'P1,description,Oil,itm_7,,maybe,',
      'P1,description,  SUGAR!! ,itm_8,,,',
      'P1,description,Rice,itm_9,1,false,merchant,extra',
      `P1,description,${'k'.repeat(301)},itm_10,,,`,
    ].join('\n');
    expect(problems(csv)).toEqual([
      'row 3: supplierPin is required',
      'row 4: by must be description or code',
      'row 5: factor must be more than 0',
      'row 6: factor must be a number',
      'row 7: notStock cannot be given with itemId or factor: a line is an item or not stock, not both',
      'row 8: itemId is required (or notStock: true, for a line that is not stock)',
      'row 9: notStock must be true or false (or yes / no, 1 / 0), or empty',
      "row 10: key is the same line of the same supplier as row 2's " +
        '(descriptions are alike whatever their case, spacing and punctuation)',
      'row 11 has 8 cells where the header has 7: a cell holding a comma needs quotes',
      'row 12: key must be at most 300 characters',
    ]);
  });

  it('counts rows as the file’s lines, the header being row 1, blank lines included', () => {
    expect(problems(`${HEADER}\n\nP1,description,Sugar,,,,\n`)).toEqual([
      'row 3: itemId is required (or notStock: true, for a line that is not stock)',
    ]);
  });

  it('says what is wrong with the header, and reads no row then', () => {
    expect(problems('supplier,by,key,item,factor\nP1,description,Sugar,itm_1,\n')).toEqual([
      'row 1: supplier is not a known column (the columns: supplierPin,by,key,itemId,factor,notStock,source)',
      'row 1: item is not a known column (the columns: supplierPin,by,key,itemId,factor,notStock,source)',
      'row 1: supplierPin is a column the header must have',
      'row 1: itemId is a column the header must have (or notStock)',
    ]);
    expect(problems('supplierPin,by,key,itemId,key\n')).toEqual(['row 1: key is named more than once']);
  });

  it('refuses an empty file, one without rows, one too long, and one that is not CSV', () => {
    expect(problems('')).toEqual([
      'the file is empty: its first row names the columns (supplierPin,by,key,itemId,factor,notStock,source)',
    ]);
    expect(problems(`${HEADER}\n`)).toEqual(['the file has no rows']);
    const rows = Array.from({ length: MAPPINGS_CSV_ROWS_MAX + 1 }, (_, i) => `P1,code,C${i},itm,,,`);
    expect(problems([HEADER, ...rows].join('\n'))).toEqual([`the file has 10001 rows: an import takes at most 10000`]);
    expect(problems(`${HEADER}\nP1,description,"Sugar,itm,,,\n`)[0]).toMatch(/^the file is not valid CSV: /);
  });

  it('says the first problem and how many more in its message', () => {
    expect(() => mappingsFromCsv(`${HEADER}\n,description,a,i,,,\nP1,code,b,,,,\n`)).toThrow(
      'the mappings CSV has 2 problem(s) on 2 row(s), nothing was imported: row 2: supplierPin is required ' +
        '(and 1 more problem(s))',
    );
  });
});
