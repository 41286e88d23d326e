/**
 * What the CLIs over the typed clients (sales, sync-batch, purchases) share: `<command> [arguments] [options]`
 * read the same way, input checked before Temporal is contacted, results printed as JSON, and the same exit
 * codes: 0 done, 1 the operation failed (or Temporal could not be reached), 2 bad input or configuration.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SaleInputError } from '../client/errors.js';
import { loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { runMain } from './run-main.js';

/** Wrong command line or unreadable input file: exit 2, like a `SaleInputError`. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>>['values'];

export interface CommandLine<O extends Options> {
  command: string | undefined;
  args: string[];
  values: Values<O>;
}

/** Reads the command line (with -h / --help added to `options`); prints the usage and answers undefined for help. */
export function parseCommandLine<O extends Options>(argv: string[], options: O, usage: string): CommandLine<O> | undefined {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
  }
  const [command, ...args] = parsed.positionals;
  const { help } = parsed.values as { help?: boolean };
  if (help === true || command === 'help') {
    console.log(usage);
    return undefined;
  }
  return { command, args, values: parsed.values as Values<O> };
}

/** No command, or one the CLI does not have. */
export function unknownCommand(command: string | undefined, usage: string): UsageError {
  return new UsageError(`${command === undefined ? 'a command is required' : `unknown command "${command}"`}\n\n${usage}`);
}

export interface CommandResult {
  /** Printed as JSON on standard output. */
  output: unknown;
  /** Exit code (default 0). */
  code?: number;
}

/**
 * Connects with the environment's Temporal settings, runs the command, prints its output and closes the
 * connection. The settings are checked (files read, named errors) before anything is contacted.
 */
export async function connectAndRun<Connected extends { close(): Promise<void> }>(
  connect: (settings: TemporalSettings) => Promise<Connected>,
  run: (connected: Connected) => Promise<CommandResult>,
): Promise<number> {
  const settings = loadTemporalSettings(process.env);
  const connected = await connect(settings);
  try {
    const { output, code = 0 } = await run(connected);
    console.log(JSON.stringify(output, null, 2));
    return code;
  } finally {
    await connected.close();
  }
}

/** `runMain`, with bad input (a `UsageError` or `SaleInputError`: nothing was sent) exiting 2 too. */
export function runClientCommand(main: () => Promise<number>): void {
  runMain(async () => {
    try {
      return await main();
    } catch (err) {
      if (!(err instanceof UsageError || err instanceof SaleInputError)) throw err;
      console.error(`error: ${err.message}`);
      return 2;
    }
  });
}
