// What the CLIs over the typed clients share: input checked before Temporal is contacted, JSON out, EXIT codes.
import { SaleInputConflictError, SaleInputError } from '../client/errors.js';
import { connectSalesClient, type ConnectedSalesClient } from '../client/sales-client.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { EXIT_USAGE, createProgram, parseAndRun, type CliCommand, type HelpSections } from './command.js';
import { runMain } from './run-main.js';

/** An input file that cannot be read or parsed: exit 2, like a `SaleInputError`. */
export class UsageError extends Error {}

export const TEMPORAL_ENVIRONMENT: HelpSections['environment'] = [
  ['TEMPORAL_ADDRESS', `Temporal frontend host:port (default ${DEFAULT_TEMPORAL_ADDRESS})`],
  ['TEMPORAL_NAMESPACE', 'namespace (default "default")'],
  ['TEMPORAL_API_KEY', 'API key (Temporal Cloud); turns TLS on; or TEMPORAL_API_KEY_FILE'],
  [
    'TEMPORAL_TLS, TEMPORAL_TLS_*',
    'TLS / mTLS: _CLIENT_CERT_PATH, _CLIENT_KEY_PATH, _SERVER_CA_CERT_PATH, _SERVER_NAME',
  ],
  ['TEMPORAL_PROFILE', 'profile of temporal.toml (TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml)'],
  ['TEMPORAL_CONNECT_TIMEOUT_MS', 'connect timeout (default 10000)'],
  [
    'PAYLOAD_KEYS, PAYLOAD_KEYS_FILE',
    "the workers' payload keys: inputs and answers carry customer data, encrypted (or PAYLOAD_ENCRYPTION=off)",
  ],
];

/** 2 is also commander's, for a wrong command line (command.ts). */
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
  /** Printed as JSON. */
  output: unknown;
  code?: number;
}

export function clientProgram(
  name: string,
  description: string,
  exit: Pick<HelpSections, 'done' | 'failed' | 'more'>,
): CliCommand {
  const output = 'the result as JSON on standard output; errors on standard error, naming what failed (never a secret)';
  return createProgram(name, description, { environment: TEMPORAL_ENVIRONMENT, output, ...exit });
}

/** The settings are checked (files read, named errors) before anything is contacted. */
export async function connectAndRun(
  run: (connected: ConnectedSalesClient) => Promise<CommandResult>,
  options: Parameters<typeof connectSalesClient>[0] = {},
): Promise<number> {
  const connected = await connectSalesClient(options);
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
