/**
 * `npm run sales -- <command> …`: the sales client API from a shell, for operators and scripts. Every input
 * is checked (by the client's own checks) before Temporal is contacted; results are printed as JSON.
 * Exit codes: 0 done, 1 the operation failed (or Temporal could not be reached), 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import { connectSalesClient, type OperationOptions, type SalesClient } from '../client/index.js';
import * as checks from '../client/schemas.js';
import { installTracing, tracingSettings } from '../temporal/tracing.js';
import { SALE_TASK_QUEUE } from '../contracts/task-queues.js';
import { createProgram, nonBlank } from './command.js';
import { TEMPORAL_ENVIRONMENT_HELP, UsageError, connectAndRun, runClientProgram } from './client-command.js';

type Call = (sales: SalesClient, options: OperationOptions) => Promise<unknown>;

interface SalesOptions {
  taskQueue?: string;
  updateId?: string;
}

/** A command on one sale, named by its business and trader invoice number ("tin"), and at most one argument more. */
interface SaleCommand {
  description: string;
  argument?: string;
  /** Reads and checks that argument, before any connection is made. */
  prepare(businessId: string, tin: string, argument: string): Promise<Call>;
}

/** The commands whose one more argument is a word the client checks and passes on as it is. */
function withWord(
  description: string,
  argument: string,
  check: (word: string) => unknown,
  operation: 'cancel' | 'itemFixed' | 'confirmStockMovement' | 'resendStockMovement',
): SaleCommand {
  return {
    description,
    argument,
    async prepare(businessId, tin, word) {
      check(word);
      return (sales, options) => sales[operation](businessId, tin, word, options);
    },
  };
}

const SALE_COMMANDS: Record<string, SaleCommand> = {
  state: {
    description: "print the sale's whole state",
    prepare: async (businessId, tin) => (sales) => sales.getState(businessId, tin),
  },
  refund: {
    description: 'refund a signed sale: {"reason", "returnDate", "traderInvoiceNumber", "restock"?}',
    argument: 'file.json|-',
    async prepare(businessId, tin, source) {
      const request = checks.parseRefundRequest(await readJson(source, 'refund request'));
      return (sales, options) => sales.refund(businessId, tin, request, options);
    },
  },
  retry: {
    description: 'submit a parked sale again',
    prepare: async (businessId, tin) => (sales, options) => sales.retry(businessId, tin, options),
  },
  cancel: withWord('give up on a sale that is not signed', 'reason', checks.parseCancelArgs, 'cancel'),
  'item-fixed': withWord('the item was fixed in the dashboard: try its registration again', 'itemId', checks.parseItemFixedArgs, 'itemFixed'),
  'confirm-stock': withWord(
    'an ambiguous stock movement did reach the service: do not send it again',
    'referenceId',
    checks.parseStockMovementArgs,
    'confirmStockMovement',
  ),
  'resend-stock': withWord(
    'an ambiguous stock movement did not reach the service: send it again',
    'referenceId',
    checks.parseStockMovementArgs,
    'resendStockMovement',
  ),
};

async function readJson(source: string, what: string): Promise<unknown> {
  const from = source === '-' ? 'standard input' : source;
  let text: string;
  try {
    text = source === '-' ? await readStdin() : await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the ${what} from ${from}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`the ${what} in ${from} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/** Connects (the input was checked), makes the call and prints its answer. */
function connectAndCall(call: Call, { taskQueue, updateId }: SalesOptions): Promise<number> {
  return connectAndRun(
    async (settings) => {
      // With an OTLP endpoint configured, the start (or update, signal) is the root of the sale's trace.
      const tracing = await installTracing({ settings: tracingSettings(process.env) });
      const { sales, close } = await connectSalesClient({ settings, taskQueue });
      return {
        sales,
        close: async () => {
          await close();
          await tracing?.shutdown();
        },
      };
    },
    async ({ sales }) => ({ output: await call(sales, updateId === undefined ? {} : { updateId }) }),
  );
}

const program = createProgram(
  'npm run sales --',
  'The sales client API from a shell (tin = the sale\'s trader invoice number). JSON is read from the file named, or from standard input with "-"; results are printed as JSON.',
)
  .option('--task-queue <name>', `task queue of the sale workflows (default ${SALE_TASK_QUEUE}; start only)`)
  .option('--update-id <id>', 'update id (default derived from the request); the same id twice acts once', nonBlank('--update-id'))
  .addHelpText(
    'after',
    `${TEMPORAL_ENVIRONMENT_HELP}\n\nExit codes: 0 done, 1 the operation failed or Temporal could not be reached, 2 bad input (the field is named).`,
  );

program
  .command('start')
  .description('start a sale, or find the one already started with the same business and tin')
  .argument('<file.json|->')
  .act<SalesOptions>(async ([source], options) => {
    const sale = checks.parseSaleInput(await readJson(source!, 'sale'));
    return connectAndCall((sales) => sales.startSale(sale), options);
  });

for (const [name, command] of Object.entries(SALE_COMMANDS)) {
  const verb = program.command(name).description(command.description).argument('<businessId>').argument('<tin>');
  if (command.argument !== undefined) verb.argument(`<${command.argument}>`);
  verb.act<SalesOptions>(async ([businessId, tin, argument = ''], options) => {
    const sale = checks.parseSaleReference(businessId, tin);
    return connectAndCall(await command.prepare(sale.businessId, sale.traderInvoiceNumber, argument), options);
  });
}

runClientProgram(program);
