// Every input is checked by the client's own checks before Temporal is contacted; exit codes: EXIT.
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import {
  FiscalDaysClient,
  connectSalesClient,
  loadTemporalSettings,
  type AwaitReceiptOptions,
  type SaleInput,
  type SaleReceiptAnswer,
  type SalesClient,
} from '../client/index.js';
import * as checks from '../client/errors.js';
import { installTracing, tracingSettings } from '../temporal/tracing.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { AWAIT_RECEIPT_WAIT_MAX } from '../contracts/sale-input.js';
import {
  DEFAULT_PARK_REASON,
  PARKED_SALES_CONCURRENCY,
  parkedSalesQuery,
  type ParkedSalesFilter,
} from '../client/parked-sales.js';
import { nonBlank } from './command.js';
import { dayCsv, dayText } from './fiscal-day-table.js';
import {
  EXIT,
  UsageError,
  clientProgram,
  connectAndRun,
  runClientProgram,
  type CommandResult,
} from './client-command.js';

type Call = (sales: SalesClient, options: AwaitReceiptOptions) => Promise<CommandResult>;

type SalesOptions = AwaitReceiptOptions & { taskQueue?: string };

/** Exits 0. */
const printed =
  (call: (sales: SalesClient, options: AwaitReceiptOptions) => Promise<unknown>): Call =>
  async (sales, options) => ({ output: await call(sales, options) });

/** Prints the receipt answer; not signed within the wait is its own exit code, so a till's script can branch on it. */
const receiptResult = (answer: SaleReceiptAnswer): CommandResult => ({
  output: answer,
  code: answer.signed ? EXIT.done : EXIT.notSigned,
});

/** A command on one sale, named by its business and trader invoice number ("tin"), and at most one argument more. */
interface SaleCommand {
  description: string;
  argument?: string;
  /** Reads and checks that argument, before any connection is made. */
  prepare(businessId: string, tin: string, argument: string): Promise<Call>;
}

const SALE_COMMANDS: Record<string, SaleCommand> = {
  state: {
    description: "print the sale's whole state",
    prepare: async (businessId, tin) => printed((sales) => sales.getState(businessId, tin)),
  },
  receipt: {
    description:
      "wait up to --wait for the sale's signed receipt and print the answer: {signed, receipt, reason, state}; " +
      'reason says why not signed yet (parked, or waiting out an outage by itself)',
    // The wait was checked with the other options, before this runs.
    prepare: async (businessId, tin) => async (sales, options) =>
      receiptResult(await sales.awaitReceipt(businessId, tin, options)),
  },
  refund: {
    description:
      'refund a signed sale through its refund workflow (one per sale): ' +
      '{"reason", "returnDate", "traderInvoiceNumber", "restock"?, "saleId"?, "branchId"?}',
    argument: 'file.json|-',
    async prepare(businessId, tin, source) {
      const request = checks.parseRefundRequest(await readJson(source, 'refund request'));
      return printed((sales, options) => sales.refund(businessId, tin, request, options));
    },
  },
  retry: {
    description: 'submit a parked sale again',
    prepare: async (businessId, tin) => printed((sales, options) => sales.retry(businessId, tin, options)),
  },
  cancel: {
    description: 'give up on a sale that is not signed',
    argument: 'reason',
    async prepare(businessId, tin, reason) {
      checks.parseCancelArgs(reason);
      return printed((sales, options) => sales.cancel(businessId, tin, reason, options));
    },
  },
  'item-fixed': {
    description: 'the item was fixed in the dashboard: try its registration again',
    argument: 'itemId',
    async prepare(businessId, tin, itemId) {
      checks.parseItemFixedArgs(itemId);
      return printed((sales, options) => sales.itemFixed(businessId, tin, itemId, options));
    },
  },
};

async function readJson(source: string, what: string): Promise<unknown> {
  const from = source === '-' ? 'standard input' : source;
  const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));
  let json: string;
  try {
    json = source === '-' ? await text(process.stdin) : await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the ${what} from ${from}: ${reason(err)}`);
  }
  try {
    return JSON.parse(json) as unknown;
  } catch (err) {
    throw new UsageError(`the ${what} in ${from} is not valid JSON: ${reason(err)}`);
  }
}

async function connectAndCall(call: Call, { taskQueue, updateId, wait }: SalesOptions): Promise<number> {
  // The Temporal settings are refused before the tracing ones; the client is made once tracing is installed.
  const settings = loadTemporalSettings(process.env);
  // With an OTLP endpoint configured, the start (or update, signal) is the root of the sale's trace.
  const tracing = await installTracing({ settings: tracingSettings(process.env) });
  try {
    return await connectAndRun(({ sales }) => call(sales, { updateId, wait }), { settings, taskQueue });
  } finally {
    await tracing?.shutdown();
  }
}

const program = clientProgram(
  'npm run sales --',
  "The sales client API from a shell (tin = the sale's trader invoice number). " +
    'JSON is read from the file named, or from standard input with "-"; results are printed as JSON.',
  {
    done: 'done (sign, receipt: the sale is signed; the receipt values are in the answer)',
    failed:
      'the operation failed or was refused, or Temporal could not be reached (resume-parked: a retry failed; ' +
      'a sale that was no longer parked is counted as refused, not failed)',
    more: [
      [
        EXIT.conflict,
        'start, sign: the invoice number was already started with another input; the differing fields are named',
      ],
      [
        EXIT.notSigned,
        "sign, receipt: not signed within the wait; the answer's state says why (in flight, parked, cancelled)",
      ],
    ],
  },
)
  .option(
    '--task-queue <name>',
    `task queue of the sale workflows (default ${WORKFLOW_TASK_QUEUE}; start, sign, refund and resume-parked only)`,
  )
  .option(
    '--update-id <id>',
    'update id (default derived from the request; sign, receipt: a fresh one); the same id twice acts once',
    nonBlank('--update-id'),
  )
  .option(
    '--wait <duration>',
    'sign, receipt: longest wait for the signed receipt, e.g. 30s, 2m ' +
      `(default 30 seconds, at most ${AWAIT_RECEIPT_WAIT_MAX})`,
  );

/** The sale is read from a file or standard input and checked before anything is contacted (like the wait). */
function withSale(call: (sale: SaleInput) => Call) {
  return async ([source]: string[], options: SalesOptions) => {
    const sale = checks.parseSaleInput(await readJson(source!, 'sale'));
    checks.parseWait(options.wait);
    return connectAndCall(call(sale), options);
  };
}

program
  .command('start')
  .description('start a sale, or find the one already started with the same business and tin (and the same input)')
  .argument('<file.json|->')
  .act(withSale((sale) => printed((sales) => sales.startSale(sale))));

program
  .command('sign')
  .description(
    "a till's one call: start the sale (or find it) and wait up to --wait for its signed receipt; " +
      'prints {workflowId, signed, receipt, state}',
  )
  .argument('<file.json|->')
  .act(withSale((sale) => async (sales, options) => receiptResult(await sales.startAndAwaitReceipt(sale, options))));

program
  .command('resume-parked')
  .summary('resume the sales parked after an outage, of a business or an application (a dry run unless --yes)')
  .description(
    `resume the sales of a business (--business) or an application (--application) parked with --reason ` +
      `(default ${DEFAULT_PARK_REASON}): lists them and sends nothing unless --yes, then retries each, ` +
      `${PARKED_SALES_CONCURRENCY} at a time. Found through Temporal's visibility, which lags the sales by a few ` +
      'seconds: a sale parked just now may be missing (run it again), and each is read before its retry, so one ' +
      'that moved on is left alone',
  )
  .option('--business <businessId>', 'the sales of this business', nonBlank('--business'))
  .option(
    '--application <name>',
    'the sales of this compliance application (multi-tenant fleets)',
    nonBlank('--application'),
  )
  .option(
    '--reason <code>',
    `the park code (default ${DEFAULT_PARK_REASON}; e.g. authority_unavailable)`,
    nonBlank('--reason'),
  )
  .option('--yes', 'resume them; without it nothing is sent')
  .act<SalesOptions & { business?: string; application?: string; reason?: string; yes?: boolean }>(
    async (_args, options) => {
      if (options.business === undefined && options.application === undefined)
        throw new UsageError('resume-parked needs --business <businessId> or --application <name> (or both)');
      const filter = { businessId: options.business, application: options.application, reason: options.reason };
      // A value no query can match is refused before anything is contacted.
      parkedSalesQuery(options.taskQueue ?? WORKFLOW_TASK_QUEUE, filter);
      return connectAndCall((sales) => resumeParked(sales, filter, options.yes === true), options);
    },
  );

/** The dry run lists; --yes resumes. Exit 0 unless a sale's retry failed (a refusal is counted, not a failure). */
async function resumeParked(sales: SalesClient, filter: ParkedSalesFilter, yes: boolean): Promise<CommandResult> {
  const { query, sales: found } = await sales.findParkedSales(filter);
  if (!yes) {
    const next = found.length === 0 ? 'nothing to resume' : 'nothing was sent: run it again with --yes to resume them';
    const listed = await sales.viewParkedSales(found, filter);
    return { output: { dryRun: true, query, found: found.length, sales: listed, next } };
  }
  const outcomes = await sales.resumeParkedSales(found, filter);
  const count = (outcome: string) => outcomes.filter((o) => o.outcome === outcome).length;
  const [resumed, refused, failed] = [count('resumed'), count('refused'), count('failed')];
  return {
    output: { dryRun: false, query, found: found.length, resumed, refused, failed, sales: outcomes },
    code: failed === 0 ? EXIT.done : EXIT.failed,
  };
}

program
  .command('day')
  .description(
    "print a business's day as the authority signed it, per control unit: receipts, numbers never seen, totals per " +
      'tax letter (docs/fiscal-day.md)',
  )
  .argument('<businessId>')
  .option('--date <YYYY-MM-DD>', 'the day (default: today in Nairobi)', nonBlank('--date'))
  .option('--scu <scuId>', 'one control unit', nonBlank('--scu'))
  .option('--branch <branchId>', 'the control units whose documents named this branch', nonBlank('--branch'))
  .option('--csv', 'CSV, one row per control unit and tax letter, instead of the table')
  .option('--json', 'the day books as JSON')
  .act<SalesOptions & { date?: string; scu?: string; branch?: string; csv?: boolean; json?: boolean }>(
    async ([businessId], options) => {
      checks.parseSaleReference(businessId!, 'day');
      if (options.date !== undefined && !(/^\d{4}-\d{2}-\d{2}$/.test(options.date) && Date.parse(options.date)))
        throw new UsageError(`--date must be a day, YYYY-MM-DD: got "${options.date}"`);
      const settings = loadTemporalSettings(process.env);
      const connected = await connectSalesClient({ settings, taskQueue: options.taskQueue });
      try {
        const days = await new FiscalDaysClient(connected.client, { taskQueue: options.taskQueue }).days(businessId!, {
          date: options.date,
          scuId: options.scu,
          branchId: options.branch,
        });
        process.stdout.write(
          options.json ? `${JSON.stringify(days, null, 2)}\n` : options.csv ? dayCsv(days) : dayText(days),
        );
        return EXIT.done;
      } finally {
        await connected.close();
      }
    },
  );

program
  .command('till-close')
  .description(
    "match a till's close against the day's book: " +
      '{"businessId", "scuId", "date", "receipts": {"NS": n, "NC": n}, "taxes": {"A": {"taxable", "tax", "total"}}, ' +
      '"invoiceNumbers"?: […]}; prints every difference, and exits 1 when there is one',
  )
  .argument('<file.json|->')
  .act<SalesOptions>(async ([source], options) => {
    // Checked before anything is contacted.
    const till = checks.parseTillClose(await readJson(source!, 'till close'));
    const { taskQueue } = options;
    return connectAndRun(
      async ({ client }) => {
        const match = await new FiscalDaysClient(client, { taskQueue }).matchTillClose(till);
        return { output: match, code: match.matched ? EXIT.done : EXIT.failed };
      },
      { settings: loadTemporalSettings(process.env), taskQueue },
    );
  });

for (const [name, command] of Object.entries(SALE_COMMANDS)) {
  const verb = program.command(name).description(command.description).argument('<businessId>').argument('<tin>');
  if (command.argument !== undefined) verb.argument(`<${command.argument}>`);
  verb.act<SalesOptions>(async ([businessId, tin, argument = ''], options) => {
    const sale = checks.parseSaleReference(businessId, tin);
    checks.parseWait(options.wait);
    return connectAndCall(await command.prepare(sale.businessId, sale.traderInvoiceNumber, argument), options);
  });
}

runClientProgram(program);
