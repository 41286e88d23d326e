/**
 * A workflow's history as the Temporal CLI prints it without a codec (`temporal workflow show --output json`),
 * made searchable: the CLI prints payload bytes in base64, so a plain-JSON payload would hide from a text
 * search; every base64 value is searched decoded as well.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';

const execFileAsync = promisify(execFile);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface RawHistory {
  events: number;
  /** Every string of the output, base64 ones also decoded, one per line. */
  text: string;
}

export async function rawHistory(where: {
  address: string;
  namespace: string;
  workflowId: string;
  runId: string;
}): Promise<RawHistory> {
  const cli = (await resolveTemporalExecutable('temporal')).path;
  const args = [
    'workflow',
    'show',
    '--output',
    'json',
    '--address',
    where.address,
    '--namespace',
    where.namespace,
    '--workflow-id',
    where.workflowId,
    '--run-id',
    where.runId,
  ];
  // Only what the flags say: no temporal.toml profile, no TEMPORAL_* variable, above all no codec endpoint.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' };
  const { stdout } = await execFileAsync(cli, args, { env, maxBuffer: 64 * 1024 * 1024 });
  const history = JSON.parse(stdout) as { events?: unknown[] };
  return { events: history.events?.length ?? 0, text: strings(history).join('\n') };
}

function strings(value: unknown): string[] {
  if (typeof value === 'string')
    return BASE64.test(value) ? [value, Buffer.from(value, 'base64').toString('utf8')] : [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => [key, ...strings(item)]);
  return [];
}
