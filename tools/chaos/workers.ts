/**
 * Worker processes of a chaos run: each is `src/cli/worker.ts` from the current code, run by node with tsx's
 * loader (one process, so a SIGKILL leaves nothing behind), its output in a log file. A worker that exits on its
 * own (e.g. its start-up check met a fault) is started again; every child is killed when this process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READY_LINE = 'worker running';
const STOP_GRACE_MS = 10_000;
const RESTART_DELAY_MS = 1_000;

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface WorkerEvent {
  worker: string;
  event: 'started' | 'ready' | 'killed' | 'exited';
  atMs: number;
  pid: number | undefined;
  detail?: string;
}

export class WorkerProcess {
  private child: ChildProcess | undefined;
  private stopping = false;
  private readonly log: WriteStream;
  private ready: { promise: Promise<void>; resolve: () => void } = deferred();

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    logDir: string,
    private readonly events: WorkerEvent[],
    private readonly clock: () => number,
  ) {
    this.log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    this.ready = deferred();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/worker.ts'], {
      cwd: REPO_ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    live.add(child);
    this.record('started', child.pid);
    let seen = '';
    const onData = (chunk: Buffer) => {
      this.log.write(chunk);
      if (seen !== READY_LINE) {
        seen = (seen + chunk.toString('utf8')).slice(-4_096);
        if (seen.includes(READY_LINE)) {
          seen = READY_LINE;
          this.record('ready', child.pid);
          this.ready.resolve();
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      live.delete(child);
      if (signal === 'SIGKILL' && this.child !== child) return;
      this.record('exited', child.pid, `code ${code ?? '-'} signal ${signal ?? '-'}`);
      if (!this.stopping && this.child === child)
        void sleep(RESTART_DELAY_MS).then(() => !this.stopping && this.start());
    });
  }

  /** Resolves once the current process says it is running (its checks passed, its workers polling). */
  whenReady(timeoutMs: number): Promise<void> {
    return Promise.race([
      this.ready.promise,
      sleep(timeoutMs, undefined, { ref: false }).then(() => {
        throw new Error(
          `worker ${this.name} not running after ${timeoutMs / 1000} s (see ${this.log.path.toString()})`,
        );
      }),
    ]);
  }

  /** A crash: SIGKILL, then a new process at once. */
  killAndRestart(): void {
    if (this.stopping) return;
    const child = this.child;
    this.child = undefined;
    if (child) {
      this.record('killed', child.pid);
      child.kill('SIGKILL');
    }
    this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const graceful = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
      if (!graceful) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    await new Promise<void>((resolve) => this.log.end(resolve));
  }

  private record(event: WorkerEvent['event'], pid: number | undefined, detail?: string): void {
    this.events.push({ worker: this.name, event, atMs: this.clock(), pid, ...(detail ? { detail } : {}) });
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Kills every worker still running, at once: for Ctrl+C and failures. */
export function killAllWorkers(): void {
  for (const child of live) child.kill('SIGKILL');
}
