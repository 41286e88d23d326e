/**
 * Worker processes as a deployment runs them (`tsx src/cli/worker.ts` with its environment), and the CPU time of a
 * process and its descendants read from /proc (Linux), for the throughput profile.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;
const READY_TIMEOUT_MS = 180_000;
const STOP_GRACE_MS = 20_000;

/** A process's CPU over a measured span. */
export interface ProcessCpu {
  process: string;
  cpuSeconds: number;
  /** CPU time over wall time, in % of one core. */
  percentOfOneCore: number;
}

export interface WorkerProcess {
  label: string;
  pid: number;
  /** Resolves once the worker logged "worker running"; rejects if it exits first. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/** `script`: the worker's entry point, src/cli/worker.ts unless a section runs more beside it. */
export function spawnWorkerProcess(
  label: string,
  env: Record<string, string>,
  script = 'src/cli/worker.ts',
): WorkerProcess {
  const child: ChildProcess = spawn(resolve(REPO_ROOT, 'node_modules/.bin/tsx'), [script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4_000);
  };
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const ready = new Promise<void>((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`${label}: not running after ${READY_TIMEOUT_MS} ms: ${tail}`)),
      READY_TIMEOUT_MS,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (tail.includes('"worker running"')) {
        clearTimeout(timer);
        ok();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`${label}: exited with ${String(code)} before running: ${tail}`));
    });
  });
  ready.catch(() => undefined);
  return {
    label,
    pid: child.pid ?? -1,
    ready,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuSeconds: number;
}

/** Parses /proc/<pid>/stat: the name is in parentheses and may hold spaces, so fields are counted after the last ')'. */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // After the name: state(3) ppid(4) … utime(14) stime(15), i.e. indexes 0, 1 … 11, 12.
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    ppid: Number(fields[1]),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
  };
}

function allProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      out.push(parseProcStat(readFileSync(`/proc/${name}/stat`, 'utf8')));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/** CPU seconds (user + system) used so far by `pid` and its living descendants. */
export function treeCpuSeconds(pid: number, processes: ProcStat[] = allProcesses()): number {
  const children = new Map<number, ProcStat[]>();
  for (const p of processes) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const self = processes.find((p) => p.pid === pid);
  let total = self?.cpuSeconds ?? 0;
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length) {
    const p = stack.pop()!;
    total += p.cpuSeconds;
    stack.push(...(children.get(p.pid) ?? []));
  }
  return total;
}

/** The direct children of `pid` named `comm` (e.g. the `temporal` dev server this process started). */
export function childrenNamed(pid: number, comm: string): number[] {
  return allProcesses()
    .filter((p) => p.ppid === pid && p.comm === comm)
    .map((p) => p.pid);
}

/**
 * The Temporal server's processes, for its CPU: the dev server this process started, or else a server it did not
 * (tools/temporal-postgres.sh: `temporal-server` and the PostgreSQL cluster under it, whose postmaster counts its
 * living backends). Empty when neither runs here.
 */
export function serverProcesses(benchPid: number): Array<{ pid: number; label: string }> {
  const devServer = childrenNamed(benchPid, 'temporal');
  if (devServer.length > 0) return devServer.map((pid) => ({ pid, label: 'temporal dev server' }));
  const all = allProcesses();
  const postmaster = (p: ProcStat) =>
    p.comm === 'postgres' && !all.some((q) => q.pid === p.ppid && q.comm === 'postgres');
  return all
    .filter((p) => p.comm === 'temporal-server' || postmaster(p))
    .map((p) => ({ pid: p.pid, label: p.comm === 'postgres' ? 'postgres (with its backends)' : 'temporal-server' }));
}
