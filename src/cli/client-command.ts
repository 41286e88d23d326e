/**
 * What the CLIs over the typed clients (sales, sync-batch, purchases) share: the Temporal settings read from the
 * environment, input checked before Temporal is contacted, results printed as JSON, and the same exit codes: 0
 * done, 1 the operation failed (or Temporal could not be reached), 2 bad input or configuration.
 */
import { SaleInputError } from '../client/errors.js';
import { DEFAULT_TEMPORAL_ADDRESS, loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { parseAndRun, type CliCommand } from './command.js';
import { runMain } from './run-main.js';

/** An input file that cannot be read or parsed: exit 2, like a `SaleInputError`. */
export class UsageError extends Error {}

/** The help's section on the environment these CLIs connect with. */
export const TEMPORAL_ENVIRONMENT_HELP = `
Environment:
  TEMPORAL_ADDRESS     Temporal frontend host:port (default ${DEFAULT_TEMPORAL_ADDRESS})
  TEMPORAL_NAMESPACE   namespace (default "default")
  TEMPORAL_API_KEY     API key (Temporal Cloud); turns TLS on
  TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH,
  TEMPORAL_TLS_SERVER_NAME   TLS / mTLS
  TEMPORAL_PROFILE     profile of temporal.toml (TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml)
  TEMPORAL_CONNECT_TIMEOUT_MS  connect timeout (default 10000)
  PAYLOAD_KEYS / PAYLOAD_KEYS_FILE  the workers' payload keys (or PAYLOAD_ENCRYPTION=off)`;

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

/** `runProgram` (command.ts), with bad input (a `UsageError` or `SaleInputError`: nothing was sent) exiting 2 too. */
export function runClientProgram(program: CliCommand): void {
  runMain(async () => {
    try {
      return await parseAndRun(program);
    } catch (err) {
      if (!(err instanceof UsageError || err instanceof SaleInputError)) throw err;
      console.error(`error: ${err.message}`);
      return 2;
    }
  });
}
