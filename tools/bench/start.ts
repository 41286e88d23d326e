/**
 * A production worker's start: the compiled build (`node dist/src/cli/worker.js`, as the image runs it) against the
 * bench's Temporal server and the sandbox, from process start to `/readyz` 200, and its resident memory 5 s after
 * ready. Each start is a fresh workflow task queue, so its deployment is a first one and the build makes itself
 * current. The build (`npm run build`, which writes the workflow bundles) runs first, outside the timings, then the
 * image's compile cache step (`node dist/src/cli/compile-cache.js` with NODE_COMPILE_CACHE), which the starts read.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../free-port.js';
import { benchFixture, progress, startBenchSandbox, workerProcessEnv, type BenchTemporal } from './env.js';
import { median, round } from './stats.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const READY_TIMEOUT_MS = 60_000;
const SETTLED_AFTER_READY_MS = 5_000;

export interface StartSizes {
  starts: number;
}

export interface StartRun {
  readyMs: number;
  rssMB: number;
  /** Whether the worker loaded the prebuilt bundle (its log says so) rather than bundling at start. */
  prebuilt: boolean;
}

export interface StartReport {
  runs: StartRun[];
  /** One start with the prebuilt bundle hidden: the worker bundles at start, as every start did before. */
  bundledAtStart: StartRun;
  /** One start without the compile cache: every module compiled by V8 as it loads. */
  withoutCompileCache: StartRun;
  readyMsMedian: number;
  rssMBMedian: number;
  /** Every start loaded the prebuilt bundle. */
  prebuilt: boolean;
  buildSeconds: number;
}

export const startSizes = (quick: boolean): StartSizes => ({ starts: quick ? 3 : 5 });

function residentMB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return line ? Number(line.replace(/\D+/g, '')) / 1024 : Number.NaN;
}

async function startOnce(env: Record<string, string>, n: number): Promise<StartRun> {
  const healthPort = await freePort();
  const began = performance.now();
  const child = spawn(process.execPath, ['dist/src/cli/worker.js'], {
    cwd: REPO_ROOT,
    env: {
      ...env,
      PATH: process.env.PATH ?? '',
      LOG_FORMAT: 'json',
      HEALTH_BIND_ADDRESS: `127.0.0.1:${healthPort}`,
      WORKFLOW_TASK_QUEUE: `bench-start-${process.pid}-${Date.now()}-${n}`,
      // The first build of each fresh deployment makes itself current: the default, as a first deploy runs.
      WORKER_MAKE_CURRENT: 'first',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    let readyMs: number | undefined;
    while (readyMs === undefined) {
      if (child.exitCode !== null)
        throw new Error(`start ${n}: the worker exited ${child.exitCode}: ${out.slice(-2_000)}`);
      if (performance.now() - began > READY_TIMEOUT_MS) throw new Error(`start ${n}: not ready: ${out.slice(-2_000)}`);
      const status = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) readyMs = performance.now() - began;
      else await sleep(20);
    }
    await sleep(SETTLED_AFTER_READY_MS);
    return {
      readyMs: round(readyMs),
      rssMB: round(residentMB(child.pid!), 1),
      prebuilt: out.includes('workflow bundle loaded (built with the code)') && !out.includes('workflow bundle built'),
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export async function measureStart(t: BenchTemporal, sizes: StartSizes): Promise<StartReport> {
  const built = performance.now();
  progress('start: npm run build (the compiled worker and its workflow bundles)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const buildSeconds = round((performance.now() - built) / 1000, 1);
  const compileCache = mkdtempSync(join(tmpdir(), 'bench-compile-cache-'));
  execFileSync(process.execPath, ['dist/src/cli/compile-cache.js'], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_COMPILE_CACHE: compileCache },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: 120 }));
  try {
    const withoutCache = { ...workerProcessEnv(t, sandbox, 120), LOG_LEVEL: 'info' };
    const env = { ...withoutCache, NODE_COMPILE_CACHE: compileCache };
    const runs: StartRun[] = [];
    for (let n = 1; n <= sizes.starts; n++) {
      runs.push(await startOnce(env, n));
      progress(
        `start: ${n}/${sizes.starts} ready after ${runs.at(-1)!.readyMs} ms, ${runs.at(-1)!.rssMB} MB 5 s later`,
      );
    }
    // Beside them, one start that bundles its workflows (its prebuilt bundle hidden), as every start did before.
    const manifest = resolve(REPO_ROOT, 'dist/workflow-bundles/manifest.json');
    renameSync(manifest, `${manifest}.hidden`);
    let bundledAtStart: StartRun;
    try {
      bundledAtStart = await startOnce(env, 0);
    } finally {
      renameSync(`${manifest}.hidden`, manifest);
    }
    progress(
      `start: bundling at start, ready after ${bundledAtStart.readyMs} ms, ${bundledAtStart.rssMB} MB 5 s later`,
    );
    const withoutCompileCache = await startOnce(withoutCache, -1);
    progress(`start: without the compile cache, ready after ${withoutCompileCache.readyMs} ms`);
    return {
      runs,
      bundledAtStart,
      withoutCompileCache,
      readyMsMedian: round(median(runs.map((r) => r.readyMs))),
      rssMBMedian: round(median(runs.map((r) => r.rssMB)), 1),
      prebuilt: runs.every((r) => r.prebuilt),
      buildSeconds,
    };
  } finally {
    await sandbox.close();
    rmSync(compileCache, { recursive: true, force: true });
  }
}
