/**
 * `npm run worker` as a child process: src/cli/worker.ts run by this node with tsx's loader, one process, so a
 * signal sent to it is the worker's own (as Kubernetes sends it to the container's process). Its output is kept;
 * every child still running when the test process exits is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { DEMO_ACCOUNTING_API_KEY } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { Sandbox } from '../../sandbox/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when it exited. */
  atMs: number;
}

export interface WorkerChild {
  pid: number;
  output(): string;
  /** Resolves once `text` appears in its output; rejects if it exits first or after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  exited: Promise<WorkerExit>;
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL if still running, then the exit. */
  kill(): Promise<WorkerExit>;
}

/** The run's Temporal server and `sandbox`'s services with the demo keys: what every worker process of a test needs. */
export function sandboxWorkerEnv(sandbox: Pick<Sandbox, 'complianceUrl' | 'accountingUrl'>): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    COMPLIANCE_BASE_URL: sandbox.complianceUrl,
    COMPLIANCE_API_KEY: DEMO.keys.nairobi,
    ACCOUNTING_BASE_URL: sandbox.accountingUrl,
    ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
  };
}

/** `env` is the whole environment of the child, with PATH and HOME of this process. */
export function spawnWorker(env: Record<string, string>): WorkerChild {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/worker.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<WorkerExit>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, atMs: Date.now() });
      for (const listener of listeners) listener();
    }),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid!,
    output: () => output,
    waitFor: (text, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`"${text}" not seen in ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        );
        const check = () => {
          if (output.includes(text)) finish();
          else if (!running()) finish(new Error(`the worker exited before "${text}":\n${output}`));
        };
        const finish = (err?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolve();
        };
        listeners.add(check);
        check();
      }),
    exited,
    signal: (signal) => void child.kill(signal),
    kill: async () => {
      if (running()) child.kill('SIGKILL');
      return exited;
    },
  };
}
