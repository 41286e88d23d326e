// One style of help for the operator CLIs; variables a group of CLIs shares are described once here.
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { EXIT_USAGE, createProgram, type CliCommand } from './command.js';

/** A variable (or variables read together) and what it is for. */
type HelpEntry = readonly [name: string, meaning: string];

export interface HelpSections {
  environment: readonly HelpEntry[];
  output: string;
  /** Exit codes 0 and 1; 2 (bad input, worded once: every CLI refuses it the same way) follows, then `more`. */
  done: string;
  failed: string;
  more?: ReadonlyArray<readonly [code: number, meaning: string]>;
}

export const TEMPORAL_ENVIRONMENT: readonly HelpEntry[] = [
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

/** Read as the worker reads them. */
export const SERVICES_ENVIRONMENT: readonly HelpEntry[] = [
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

/** A program (createProgram) whose help ends with these sections. */
export function helpProgram(name: string, description: string, help: HelpSections): CliCommand {
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
  return createProgram(name, description).addHelpText('after', text);
}
