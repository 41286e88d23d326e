import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * One of the project's CLIs (`src/cli/<name>.ts`) as a script runs it, against the tests' Temporal server, with
 * nothing of this process's environment but PATH and HOME (and `env`). The test workers run without payload keys (encryption is
 * tested in test/codec).
 */
export function runCli(
  name: string,
  args: string[],
  options: { stdin?: string; address?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    TEMPORAL_ADDRESS: options.address ?? inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    PAYLOAD_ENCRYPTION: 'off',
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [`src/cli/${name}.ts`, ...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** `npm run sales -- <args>`. */
export const runSalesCli = (args: string[], options: { stdin?: string; address?: string } = {}) =>
  runCli('sales', args, options);
