// Every entry point's command line, in one style of help: usage errors print the help and exit 2, as bad input does
// (run-main.ts).
import { Command, CommanderError, InvalidArgumentError, type ErrorOptions, type OptionValues } from 'commander';
import { runMain } from './run-main.js';

export const EXIT_USAGE = 2;

export class CliCommand extends Command {
  /** The action's exit code, kept on the program. */
  exitCode = 0;

  override createCommand(name?: string): CliCommand {
    return new CliCommand(name);
  }

  /** `handler` gets the (parsed) arguments, the options with the program's, and the command; answers the exit code. */
  act<O extends OptionValues = OptionValues>(
    handler: (args: string[], options: O, command: this) => Promise<number> | number,
  ): this {
    return this.action(async () => {
      const code = await handler(this.processedArgs as string[], this.optsWithGlobals<O>(), this);
      const program = programOf(this);
      if (program instanceof CliCommand) program.exitCode = code;
    });
  }

  /** A wrong number of arguments is told with the command's synopsis: `cancel takes 3 argument(s): cancel <…>`. */
  override error(message: string, errorOptions?: ErrorOptions): never {
    const arity =
      errorOptions?.code === 'commander.missingArgument' || errorOptions?.code === 'commander.excessArguments';
    return super.error(arity ? `error: ${this.arity()}` : message, errorOptions);
  }

  private arity(): string {
    const args = this.registeredArguments;
    if (args.length === 0)
      return this.parent ? `${this.name()} takes no arguments` : `expected no arguments, got: ${this.args.join(' ')}`;
    const required = args.filter((a) => a.required).length;
    const count = `${required === args.length ? required : `${required} to ${args.length}`} argument(s)`;
    const synopsis = args.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ');
    return this.parent ? `${this.name()} takes ${count}: ${this.name()} ${synopsis}` : `expected ${count}: ${synopsis}`;
  }
}

function programOf(command: Command): Command {
  return command.parent ? programOf(command.parent) : command;
}

type HelpEntry = readonly [name: string, meaning: string];

export interface HelpSections {
  environment: readonly HelpEntry[];
  output: string;
  /** Exit codes 0 and 1; 2 (bad input, worded once: every CLI refuses it the same way) follows, then `more`. */
  done: string;
  failed: string;
  more?: ReadonlyArray<readonly [code: number, meaning: string]>;
}

/** Read as the worker reads them. */
export const SERVICES_ENVIRONMENT: HelpSections['environment'] = [
  ['COMPLIANCE_BASE_URL, COMPLIANCE_API_KEY', 'the compliance service (set both, or neither for the embedded sandbox)'],
  ['ACCOUNTING_BASE_URL, ACCOUNTING_API_KEY', 'the accounting service (set both, or neither for the embedded sandbox)'],
  ['ACCOUNTING_CLIENT_SECRET', 'signs every accounting request when set'],
  [
    'COMPLIANCE_API_KEY_FILE, ACCOUNTING_*_FILE',
    'a secret above read from a file (a secret mount) instead; not both forms',
  ],
  ['SANDBOX', 'embedded: the embedded sandbox stands in for a service not configured (also used when none is)'],
  ['LOG_LEVEL', 'log level (default: warnings and errors only)'],
];

/** Columns two spaces apart, the last one unpadded. */
export function table(rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}

const column = (entries: ReadonlyArray<readonly string[]>) => table(entries).map((line) => `  ${line}`);

/** A program with the project's conventions; `name` is how it is invoked, e.g. `npm run sales --`; `help` ends it. */
export function createProgram(name: string, description: string, help?: HelpSections): CliCommand {
  const program = new CliCommand(name)
    .description(description)
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError()
    .exitOverride();
  if (!help) return program;
  const { environment, output, done, failed, more = [] } = help;
  const badInput = 'bad input or configuration: the field or variable is named; nothing was sent';
  const exitCodes = [[0, done], [1, failed], [EXIT_USAGE, badInput], ...more] as const;
  const text = [
    '',
    'Environment:',
    ...column(environment),
    '',
    'Output:',
    `  ${output}`,
    '',
    'Exit codes:',
    ...column(exitCodes.map(([code, meaning]) => [String(code), meaning] as const)),
  ].join('\n');
  return program.addHelpText('after', text);
}

/** The action's exit code; 0 after the help; 2 after a usage error. Anything else the action throws is the caller's. */
export async function parseAndRun(
  program: CliCommand,
  argv: readonly string[] = process.argv.slice(2),
): Promise<number> {
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_USAGE;
    throw err;
  }
  return program.exitCode;
}

/** `parseAndRun` as the process: a configuration error exits 2, any other error 1 (run-main.ts). */
export function runProgram(program: CliCommand): void {
  runMain(() => parseAndRun(program));
}

/** `parse` answers undefined when `text` is not a value; the refusal says `<flag> <requirement>`. */
export function valueParser<T>(flag: string, requirement: string, parse: (text: string) => T | undefined) {
  return (text: string) => {
    const value = parse(text);
    if (value === undefined) throw new InvalidArgumentError(`${flag} ${requirement}`);
    return value;
  };
}

export function wholeNumber(flag: string, max: number, requirement = `must be a whole number from 0 to ${max}`) {
  return valueParser(flag, requirement, (text) =>
    /^\d+$/.test(text) && Number(text) <= max ? Number(text) : undefined,
  );
}

export function nonBlank(flag: string): (text: string) => string {
  return valueParser(flag, 'must not be empty', (text) => (text.trim() === '' ? undefined : text));
}
