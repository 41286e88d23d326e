/**
 * `npm run sales -- <command> …`: the sales client API from a shell, for operators and scripts. Every input
 * is validated before Temporal is contacted; results are printed as JSON.
 * Exit codes: 0 done, 1 the operation failed (or Temporal could not be reached), 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import {
  connectSalesClient,
  parseCancelArgs,
  parseItemFixedArgs,
  parseRefundRequest,
  parseSaleInput,
  parseSaleReference,
  parseStockMovementArgs,
} from '../client/index.js';
import type { OperationOptions, SalesClient } from '../client/index.js';
import { DEFAULT_TEMPORAL_ADDRESS as DEFAULT_ADDRESS } from '../temporal/connection.js';
import { installTracing } from '../temporal/tracing.js';
import { SALE_TASK_QUEUE } from '../contracts/task-queues.js';
import { UsageError, connectAndRun, parseCommandLine, runClientCommand, unknownCommand } from './client-command.js';

type Run = (sales: SalesClient, options: OperationOptions) => Promise<unknown>;

interface Command {
  args: string[];
  description: string;
  /** Reads and validates everything the command needs, before any connection is made. */
  prepare(args: string[]): Promise<Run>;
}

/** A sale is named by its business and its trader invoice number ("tin"). */
const SALE = ['businessId', 'tin'];

function reference(args: string[]) {
  return parseSaleReference(args[0], args[1]);
}

const commands: Record<string, Command> = {
  start: {
    args: ['file.json|-'],
    description: 'start a sale, or find the one already started with the same business and tin',
    async prepare([source]) {
      const sale = parseSaleInput(await readJson(source!, 'sale'));
      return (sales) => sales.startSale(sale);
    },
  },
  state: {
    args: SALE,
    description: "print the sale's whole state",
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      return (sales) => sales.getState(businessId, traderInvoiceNumber);
    },
  },
  refund: {
    args: [...SALE, 'file.json|-'],
    description: 'refund a signed sale: {"reason", "returnDate", "traderInvoiceNumber", "restock"?}',
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      const request = parseRefundRequest(await readJson(args[2]!, 'refund request'));
      return (sales, options) => sales.refund(businessId, traderInvoiceNumber, request, options);
    },
  },
  retry: {
    args: SALE,
    description: 'submit a parked sale again',
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      return (sales, options) => sales.retry(businessId, traderInvoiceNumber, options);
    },
  },
  cancel: {
    args: [...SALE, 'reason'],
    description: 'give up on a sale that is not signed',
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      const { reason } = parseCancelArgs(args[2]);
      return (sales, options) => sales.cancel(businessId, traderInvoiceNumber, reason, options);
    },
  },
  'item-fixed': {
    args: [...SALE, 'itemId'],
    description: 'the item was fixed in the dashboard: try its registration again',
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      const { itemId } = parseItemFixedArgs(args[2]);
      return (sales, options) => sales.itemFixed(businessId, traderInvoiceNumber, itemId, options);
    },
  },
  'confirm-stock': {
    args: [...SALE, 'referenceId'],
    description: 'an ambiguous stock movement did reach the service: do not send it again',
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      const { referenceId } = parseStockMovementArgs(args[2]);
      return (sales, options) => sales.confirmStockMovement(businessId, traderInvoiceNumber, referenceId, options);
    },
  },
  'resend-stock': {
    args: [...SALE, 'referenceId'],
    description: 'an ambiguous stock movement did not reach the service: send it again',
    async prepare(args) {
      const { businessId, traderInvoiceNumber } = reference(args);
      const { referenceId } = parseStockMovementArgs(args[2]);
      return (sales, options) => sales.resendStockMovement(businessId, traderInvoiceNumber, referenceId, options);
    },
  },
};

function synopsis(name: string, command: Command): string {
  return [name, ...command.args.map((a) => `<${a}>`)].join(' ');
}

function usage(): string {
  const lines = Object.entries(commands).flatMap(([name, c]) => [`  ${synopsis(name, c)}`, `      ${c.description}`]);
  return [
    'Usage: npm run sales -- <command> [arguments] [options]',
    '',
    'Commands (tin = the sale\'s trader invoice number):',
    ...lines,
    '',
    'JSON is read from the file named, or from standard input with "-".',
    '',
    'Options:',
    `  --task-queue <name>  task queue of the sale workflows (default ${SALE_TASK_QUEUE}; start only)`,
    '  --update-id <id>     update id (default derived from the request); the same id twice acts once',
    '  -h, --help           show this help',
    '',
    'Environment:',
    `  TEMPORAL_ADDRESS     Temporal frontend host:port (default ${DEFAULT_ADDRESS})`,
    '  TEMPORAL_NAMESPACE   namespace (default "default")',
    '  TEMPORAL_API_KEY     API key (Temporal Cloud); turns TLS on',
    '  TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH,',
    '  TEMPORAL_TLS_SERVER_NAME   TLS / mTLS',
    '  TEMPORAL_PROFILE     profile of temporal.toml (TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml)',
    '  TEMPORAL_CONNECT_TIMEOUT_MS  connect timeout (default 10000)',
    '',
    'Exit codes: 0 done, 1 the operation failed or Temporal could not be reached, 2 bad input (the field is named).',
  ].join('\n');
}

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

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv, { 'task-queue': { type: 'string' }, 'update-id': { type: 'string' } }, usage());
  if (line === undefined) return 0;
  const { command: name, args, values } = line;
  const command = name === undefined ? undefined : commands[name];
  if (name === undefined || command === undefined) throw unknownCommand(name, usage());
  if (args.length !== command.args.length) {
    throw new UsageError(`${name} takes ${command.args.length} argument(s): ${synopsis(name, command)}`);
  }
  const updateId = values['update-id'];
  if (updateId !== undefined && updateId.trim() === '') throw new UsageError('--update-id must not be empty');

  const run = await command.prepare(args);

  return connectAndRun(
    async (settings) => {
      // With an OTLP endpoint configured, the start (or update, signal) is the root of the sale's trace.
      const tracing = await installTracing();
      const { sales, close } = await connectSalesClient({ settings, taskQueue: values['task-queue'] });
      return {
        sales,
        close: async () => {
          await close();
          await tracing?.shutdown();
        },
      };
    },
    async ({ sales }) => ({ output: await run(sales, updateId === undefined ? {} : { updateId }) }),
  );
}

runClientCommand(() => main(process.argv.slice(2)));
