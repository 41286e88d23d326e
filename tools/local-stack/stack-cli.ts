/**
 * One of the project's CLIs (`npm run <name> -- …`) run against a running local stack, as `npm start` tells a user
 * to run them: the stack's Temporal server and namespace, which need not be the defaults (a busy port gives another),
 * and its payload key when the stack made one, since the CLIs refuse to talk to encrypted workflows without it.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Env } from '../../src/config/env.js';
import type { Stack } from './stack.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The user's environment, with what the stack started in place of what it did not find configured. */
export function stackCliEnv(stack: Pick<Stack, 'temporalAddress' | 'namespace' | 'payloadKeysFile'>, env: Env): Env {
  return {
    ...env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.namespace,
    ...(stack.payloadKeysFile ? { PAYLOAD_KEYS_FILE: stack.payloadKeysFile } : {}),
  };
}

/** `npm run <name> -- <args>` as the user would type it into a POSIX shell. */
export function cliCommandLine(name: string, args: readonly string[]): string {
  const quoted = args.map((a) => (/^[\w.:/=-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`));
  return `npm run ${name} -- ${quoted.join(' ')}`;
}

/**
 * Runs `src/cli/<name>.ts` as its npm script does (tsx), without npm itself: npm's banner would only add noise, and
 * node is there wherever the demo runs. Killed after `timeoutMs`, so a CLI that hangs fails the caller instead.
 */
export function runStackCli(
  stack: Pick<Stack, 'temporalAddress' | 'namespace' | 'payloadKeysFile'>,
  name: string,
  args: readonly string[],
  options: { env?: Env; timeoutMs?: number } = {},
): Promise<CliRun> {
  const env = stackCliEnv(stack, options.env ?? process.env);
  return new Promise((settle, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `src/cli/${name}.ts`, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => settle({ code, stdout, stderr }));
  });
}
