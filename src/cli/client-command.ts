// What the CLIs over the typed clients share: input checked before Temporal is contacted, JSON out, EXIT codes.
import { SaleInputConflictError, SaleInputError } from '../client/errors.js';
import { loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { EXIT_USAGE, createProgram, parseAndRun, type CliCommand } from './command.js';
import { BAD_INPUT_EXIT, JSON_OUTPUT, TEMPORAL_ENVIRONMENT, helpSections, type HelpSections } from './help.js';
import { runMain } from './run-main.js';

/** An input file that cannot be read or parsed: exit 2, like a `SaleInputError`. */
export class UsageError extends Error {}

/** The exit codes of the CLIs over the typed clients; 2 is also commander's, for a wrong command line (command.ts). */
export const EXIT = {
  done: 0,
  failed: 1,
  badInput: EXIT_USAGE,
  /** A sale's invoice number was already started with another input (`SaleInputConflictError`). */
  conflict: 3,
  /** `awaitReceipt` answered, but the sale is not signed (yet): the answer says why. */
  notSigned: 4,
} as const;

export interface CommandResult {
  /** Printed as JSON on standard output. */
  output: unknown;
  code?: number;
}

/** A program over a typed client: the Temporal settings, JSON out, and exit codes 0, 1, 2 and then `more`. */
export function clientProgram(
  name: string,
  description: string,
  exit: { done: string; failed: string; more?: HelpSections['exitCodes'] },
): CliCommand {
  const exitCodes = [[EXIT.done, exit.done], [EXIT.failed, exit.failed], BAD_INPUT_EXIT, ...(exit.more ?? [])] as const;
  return createProgram(name, description).addHelpText(
    'after',
    helpSections({ environment: TEMPORAL_ENVIRONMENT, output: JSON_OUTPUT, exitCodes }),
  );
}

/** The settings are checked (files read, named errors) before anything is contacted. */
export async function connectAndRun<Connected extends { close(): Promise<void> }>(
  connect: (settings: TemporalSettings) => Promise<Connected>,
  run: (connected: Connected) => Promise<CommandResult>,
): Promise<number> {
  const connected = await connect(loadTemporalSettings(process.env));
  try {
    const { output, code = 0 } = await run(connected);
    console.log(JSON.stringify(output, null, 2));
    return code;
  } finally {
    await connected.close();
  }
}

/** Bad input exits 2, and a sale already started with another input 3: a script must not read either as success. */
export function runClientProgram(program: CliCommand): void {
  runMain(async () => {
    try {
      return await parseAndRun(program);
    } catch (err) {
      if (!(err instanceof UsageError || err instanceof SaleInputError || err instanceof SaleInputConflictError))
        throw err;
      console.error(`error: ${err.message}`);
      return err instanceof SaleInputConflictError ? EXIT.conflict : EXIT.badInput;
    }
  });
}
