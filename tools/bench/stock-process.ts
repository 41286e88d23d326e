/**
 * The stock section's worker as a process of its own (stock-worker.ts), which the section SIGKILLs mid-run and
 * starts again. Like processes.ts's spawnWorkerProcess, but one node process (`node --import tsx`, no launcher in
 * between), so the kill reaches the worker itself, and on the section's own task queue.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = 'tools/bench/stock-worker.ts';
const READY_TIMEOUT_MS = 180_000;
const STOP_GRACE_MS = 20_000;

export interface StockWorkerProcess {
  label: string;
  pid: number;
  /** Resolves once the worker logged "worker running"; rejects if it exits first. */
  ready: Promise<void>;
  /** SIGKILL, as a machine losing power would: no task finished, no poll answered. Resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (the worker drains), SIGKILL after a grace. */
  stop(): Promise<void>;
}

export function spawnStockWorker(label: string, env: Record<string, string>): StockWorkerProcess {
  return spawnBenchWorker(SCRIPT, label, env);
}

/** A section's worker script (`tools/bench/…-worker.ts`) as one node process of its own. */
export function spawnBenchWorker(script: string, label: string, env: Record<string, string>): StockWorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4_000);
  };
  child.stderr.on('data', keep);
  if (process.env.BENCH_WORKER_LOG) {
    const out = createWriteStream(`${process.env.BENCH_WORKER_LOG}/${label.replace(/\W/g, '_')}-${Date.now()}.log`);
    child.stdout.pipe(out);
    child.stderr.pipe(out);
  }
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const ready = new Promise<void>((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`${label}: not running after ${READY_TIMEOUT_MS} ms: ${tail}`)),
      READY_TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (tail.includes('"worker running"')) {
        clearTimeout(timer);
        ok();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`${label}: exited with ${String(child.exitCode ?? child.signalCode)} before running: ${tail}`));
    });
  });
  ready.catch(() => undefined);
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    label,
    pid: child.pid ?? -1,
    ready,
    kill: async () => {
      if (gone()) return;
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (gone()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
