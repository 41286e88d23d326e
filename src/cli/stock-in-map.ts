// `map …`: the merchant's mappings; every argument checked by the client's own checks before Temporal is contacted.
import { isUtf8 } from 'node:buffer';
import { readFile, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { MappingsCsvError, mappingsCsvProblemText, mappingsFromCsv } from '../client/stock-in-csv.js';
import {
  parseCorrectLine,
  parseMapLine,
  parseMapping,
  parseMappingKey,
  parseStockInBusinessId,
} from '../client/stock-in-input.js';
import type { MappingKey, MappingTarget } from '../contracts/stock-in.js';
import { nonBlank, valueParser, wholeNumber, type CliCommand } from './command.js';
import { UsageError } from './client-command.js';
import { print, printJson, withJson, withStockIn, type CommonOptions } from './stock-in-shared.js';
import { invoiceReport, mappingsReport } from './stock-in-view.js';

interface TargetOptions {
  item?: string;
  factor?: number;
  notStock?: boolean;
}

interface KeyOptions {
  supplier: string;
  description?: string;
  code?: string;
}

/** Problems printed before the count of the rest: a file with a wrong column has one per row. */
const PROBLEMS_SHOWN = 200;
/** Ten thousand mappings of the longest keys are a few megabytes: a file far larger is not a mappings file. */
const FILE_BYTES_MAX = 16 * 1024 * 1024;
const NUMBER = /^[+]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

const MAP_EXAMPLES = [
  '',
  'Examples:',
  '  npm run purchases -- map list biz_1',
  '  npm run purchases -- map export biz_1 --out mappings.csv',
  '  npm run purchases -- map import biz_1 mappings.csv --replace',
  '  npm run purchases -- map set biz_1 --supplier P051234567X --description "Sugar 50kg" --item itm_sugar --factor 50',
  '  npm run purchases -- map set biz_1 --supplier P051234567X --code DLV --not-stock',
  '  npm run purchases -- map remove biz_1 --supplier P051234567X --code DLV',
  '  npm run purchases -- map line biz_1 pur_123 2 --item itm_milk_500ml --factor 24',
  '  npm run purchases -- map correct biz_1 pur_123 2 --item itm_milk_1l --factor 12 --date 2026-11-20',
  '',
  'CSV columns: supplierPin,by,key,itemId,factor,notStock,source (by: description or code; source is ignored on',
  "import). A file with a bad row imports nothing; each one is named: 'row 3: factor must be more than 0'.",
].join('\n');

function targetOf({ item, factor, notStock }: TargetOptions): MappingTarget | { itemId: string; factor?: number } {
  if (item !== undefined && notStock) throw new UsageError('give --item or --not-stock, not both');
  if (notStock) {
    if (factor !== undefined) throw new UsageError('--factor goes with --item, not with --not-stock');
    return { notStock: true };
  }
  if (item === undefined) throw new UsageError('give --item <itemId> (and --factor N if need be) or --not-stock');
  return { itemId: item, ...(factor === undefined ? {} : { factor }) };
}

function keyOf({ supplier, description, code }: KeyOptions): MappingKey {
  if ((description === undefined) === (code === undefined))
    throw new UsageError('give --description <text> or --code <code>, one of them');
  return description !== undefined
    ? { supplierPin: supplier, by: 'description', key: description }
    : { supplierPin: supplier, by: 'code', key: code! };
}

const factorOption = valueParser('--factor', 'must be a number more than 0', (text) =>
  NUMBER.test(text) && Number(text) > 0 ? Number(text) : undefined,
);
const lineIndex = wholeNumber('lineIndex', Number.MAX_SAFE_INTEGER, 'must be a whole number from 0');

function withTarget(command: CliCommand, notStock: boolean): CliCommand {
  command
    .option('--item <itemId>', 'the merchant’s item the line is', nonBlank('--item'))
    .option(
      '--factor <n>',
      'units of the item in one unit of the line (default 1): 24 for a carton of 24',
      factorOption,
    );
  if (notStock) command.option('--not-stock', 'the line is not stock: a fee, a service');
  return command;
}

function withKey(command: CliCommand): CliCommand {
  return command
    .requiredOption('--supplier <PIN>', 'the supplier’s tax PIN, as its invoices show it', nonBlank('--supplier'))
    .option('--description <text>', 'the line’s description (case, spacing and punctuation aside)')
    .option('--code <code>', 'the supplier’s own code of the line');
}

async function readCsv(source: string): Promise<string> {
  const from = source === '-' ? 'standard input' : source;
  let bytes: Buffer;
  try {
    bytes = source === '-' ? await buffer(process.stdin) : await readFile(source);
  } catch (err) {
    throw new UsageError(`cannot read ${from}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (bytes.length > FILE_BYTES_MAX) throw new UsageError(`${from} is larger than a mappings file can be (16 MB)`);
  if (!isUtf8(bytes)) throw new UsageError(`${from} is not UTF-8: save it as UTF-8 (in Excel: "CSV UTF-8")`);
  return bytes.toString('utf8');
}

/** Every bad row on standard error, then one line saying nothing was imported (exit 2). */
function checkedCsv(csv: string): number {
  try {
    return mappingsFromCsv(csv).length;
  } catch (err) {
    if (!(err instanceof MappingsCsvError)) throw err;
    for (const problem of err.problems.slice(0, PROBLEMS_SHOWN)) console.error(mappingsCsvProblemText(problem));
    if (err.problems.length > PROBLEMS_SHOWN) console.error(`… and ${err.problems.length - PROBLEMS_SHOWN} more`);
    const rows = new Set(err.problems.map((p) => p.row)).size;
    throw new UsageError(`${err.problems.length} problem(s) on ${rows} row(s) of the file: nothing was imported`);
  }
}

export function addMapCommands(program: CliCommand): void {
  const map = program
    .command('map')
    .description("the merchant's mappings of supplier lines to items: list, export, import, set, remove, line, correct")
    .addHelpText('after', MAP_EXAMPLES);

  const list = map
    .command('list')
    .description('every mapping, the merchant’s and the learned')
    .argument('<businessId>');
  withJson(list).act<CommonOptions>(async ([businessId], options) => {
    const id = parseStockInBusinessId(businessId);
    return withStockIn(options, async (stockIn) => {
      const mappings = await stockIn.mappings(id);
      if (options.json) printJson(mappings);
      else print(mappingsReport(mappings));
      return 0;
    });
  });

  map
    .command('export')
    .description('every mapping as CSV: supplierPin,by,key,itemId,factor,notStock,source')
    .argument('<businessId>')
    .option('--out <file.csv>', 'write the CSV to this file (default: standard output)')
    .act<CommonOptions & { out?: string }>(async ([businessId], options) => {
      const id = parseStockInBusinessId(businessId);
      return withStockIn(options, async (stockIn) => {
        const csv = await stockIn.exportMappingsCsv(id);
        if (options.out === undefined) process.stdout.write(csv);
        else {
          await writeFile(options.out, csv);
          console.log(`wrote ${options.out}`);
        }
        return 0;
      });
    });

  withJson(
    map
      .command('import')
      .description(
        'import a CSV of mappings as the merchant’s (its source column is ignored); every row is checked first, and ' +
          'a file with a bad row imports nothing',
      )
      .argument('<businessId>')
      .argument('<file.csv|->', 'the CSV file, or - for standard input')
      .option('--replace', 'replace every merchant mapping (learned ones stay) rather than add to and change them')
      .option('--dry-run', 'check the file only; nothing is sent'),
  ).act<CommonOptions & { replace?: boolean; dryRun?: boolean }>(async ([businessId, source], options) => {
    const id = parseStockInBusinessId(businessId);
    const csv = await readCsv(source!);
    const rows = checkedCsv(csv);
    if (options.dryRun) {
      console.log(`${rows} mapping(s) ready: nothing wrong found, nothing sent`);
      return 0;
    }
    return withStockIn(options, async (stockIn) => {
      const result = await stockIn.importMappingsCsv(id, csv, { replace: options.replace === true });
      if (options.json) printJson(result);
      else {
        const how = options.replace ? ', replacing the merchant’s' : '';
        console.log(`imported ${result.imported} mapping(s)${how}: the stock-in holds ${result.mappings} now`);
      }
      return 0;
    });
  });

  const set = map.command('set').description('add or change one mapping of the merchant’s').argument('<businessId>');
  withJson(withTarget(withKey(set), true)).act<CommonOptions & KeyOptions & TargetOptions>(
    async ([businessId], options) => {
      const id = parseStockInBusinessId(businessId);
      const mapping = parseMapping({ ...keyOf(options), ...targetOf(options) });
      return withStockIn(options, async (stockIn) => {
        const result = await stockIn.putMappings(id, [mapping]);
        if (options.json) printJson(result);
        else console.log(`mapped: the stock-in holds ${result.mappings} mapping(s) now`);
        return 0;
      });
    },
  );

  const remove = map
    .command('remove')
    .description('remove one mapping (the merchant’s or a learned one)')
    .argument('<businessId>');
  withJson(withKey(remove)).act<CommonOptions & KeyOptions>(async ([businessId], options) => {
    const id = parseStockInBusinessId(businessId);
    const key = parseMappingKey(keyOf(options));
    return withStockIn(options, async (stockIn) => {
      const result = await stockIn.removeMapping(id, key);
      if (options.json) printJson(result);
      else console.log(result.removed ? 'removed' : 'no such mapping: nothing removed');
      return result.removed ? 0 : 1;
    });
  });

  const line = map
    .command('line')
    .description(
      'map a line waiting for a mapping (remembered for the supplier), or mark it not stock; the lines it settles ' +
        'go in at once',
    )
    .argument('<businessId>')
    .argument('<purchaseId>')
    .argument('<lineIndex>', 'the line’s position on the invoice, from 0', lineIndex);
  withJson(withTarget(line, true)).act<CommonOptions & TargetOptions>(
    async ([businessId, purchaseId, index], options) => {
      const id = parseStockInBusinessId(businessId);
      const request = parseMapLine({ purchaseId, line: Number(index), ...targetOf(options) });
      return withStockIn(options, async (stockIn) => {
        const invoice = await stockIn.mapLine(id, request);
        if (options.json) printJson(invoice);
        else print(invoiceReport(invoice));
        return 0;
      });
    },
  );

  const correct = map
    .command('correct')
    .description('move what a stocked line added onto another item (or the same with another factor), once')
    .argument('<businessId>')
    .argument('<purchaseId>')
    .argument('<lineIndex>', 'the line’s position on the invoice, from 0', lineIndex);
  correct.option('--date <YYYY-MM-DD>', 'the invoice’s date: finds an invoice settled over an hour ago in its book');
  withJson(withTarget(correct, false)).act<CommonOptions & TargetOptions & { date?: string }>(
    async ([businessId, purchaseId, index], options) => {
      const id = parseStockInBusinessId(businessId);
      if (options.item === undefined) throw new UsageError('correct needs --item <itemId> (and --factor N if need be)');
      const request = parseCorrectLine({
        purchaseId,
        line: Number(index),
        itemId: options.item,
        ...(options.factor === undefined ? {} : { factor: options.factor }),
        ...(options.date === undefined ? {} : { invoiceDate: options.date }),
      });
      return withStockIn(options, async (stockIn) => {
        const invoice = await stockIn.correctLine(id, request);
        if (options.json) printJson(invoice);
        else print(invoiceReport(invoice));
        return 0;
      });
    },
  );
}
