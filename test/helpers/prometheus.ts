/**
 * A real Prometheus for the tests: the `prometheus` binary on a free loopback port, with a configuration written
 * to a temporary directory (scrape jobs, rule files), read through its HTTP API; and `promtool`. No vitest here.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from './eventually.js';
import { freePort } from '../../tools/free-port.js';

/** One scrape job of a single target. */
export interface ScrapeJob {
  job: string;
  /** `host:port` of the endpoint. */
  target: string;
  /** Default `/metrics`. */
  metricsPath?: string;
}

export interface PrometheusOptions {
  jobs: ScrapeJob[];
  /** Absolute paths of rule files. */
  ruleFiles?: string[];
  /** Seconds between two scrapes, and between two rule evaluations (default 1). */
  intervalSeconds?: number;
  /** The binary (default: `prometheus` on the PATH). */
  executable?: string;
}

export interface Sample {
  metric: Record<string, string>;
  /** [Unix seconds, value as Prometheus prints it]. */
  value: [number, string];
}

export type QueryResult =
  | { resultType: 'vector'; result: Sample[] }
  | { resultType: 'scalar' | 'string'; result: [number, string] }
  | { resultType: 'matrix'; result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };

export interface QueryAnswer {
  data: QueryResult;
  /** What Prometheus warned about while evaluating (none when absent). */
  warnings?: string[];
}

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
  activeAt?: string;
  value: string;
}

export interface Target {
  labels: Record<string, string>;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
  /** ISO time of the last scrape. */
  lastScrape: string;
}

/** Prometheus refused an expression (bad_data, execution errors): the expression and its error. */
export class PrometheusQueryError extends Error {
  override readonly name = 'PrometheusQueryError';
  constructor(
    readonly expression: string,
    readonly errorType: string,
    detail: string,
  ) {
    super(`${errorType}: ${detail} (in ${expression})`);
  }
}

export interface Prometheus {
  /** e.g. http://127.0.0.1:9090 */
  url: string;
  /** An instant query, at `time` (Unix seconds; default: now). */
  query(expression: string, time?: number): Promise<QueryAnswer>;
  alerts(): Promise<Alert[]>;
  targets(): Promise<Target[]>;
  /** What the process printed (its log), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;

/** The binary's path, or undefined when it is not installed. */
export function findExecutable(name: 'prometheus' | 'promtool'): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const where = found.stdout.trim();
  return found.status === 0 && where !== '' ? where : undefined;
}

/** The configuration file's text: YAML is a superset of JSON, so JSON it is (no YAML writer needed). */
export function prometheusConfig(options: Pick<PrometheusOptions, 'jobs' | 'ruleFiles' | 'intervalSeconds'>): string {
  const interval = `${options.intervalSeconds ?? 1}s`;
  return JSON.stringify(
    {
      global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
      rule_files: options.ruleFiles ?? [],
      scrape_configs: options.jobs.map((job) => ({
        job_name: job.job,
        metrics_path: job.metricsPath ?? '/metrics',
        static_configs: [{ targets: [job.target] }],
      })),
    },
    null,
    2,
  );
}

/** Starts Prometheus and waits until /-/ready answers; a start that fails throws with the process's output. */
export async function startPrometheus(options: PrometheusOptions): Promise<Prometheus> {
  const executable = options.executable ?? findExecutable('prometheus') ?? 'prometheus';
  const dir = await mkdtemp(path.join(tmpdir(), 'prometheus-test-'));
  const configFile = path.join(dir, 'prometheus.yml');
  await writeFile(configFile, prometheusConfig(options));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    executable,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Debian's defaults point at /etc/prometheus; nothing here needs consoles.
      `--web.console.templates=${dir}`,
      `--web.console.libraries=${dir}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const append = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000));
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));

  const stop = async () => {
    await stopChild(child, exited);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      async () => {
        if (spawnError) throw new Error(`could not run ${executable}: ${spawnError.message}`);
        if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}`);
        return fetch(`${url}/-/ready`).then(
          (res) => res.ok,
          () => false,
        );
      },
      (ready) => ready,
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100, what: `prometheus ready on ${url}` },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- prometheus output ---\n${log}`);
  }

  const api = async <T>(pathAndQuery: string, expression = pathAndQuery): Promise<{ data: T; warnings?: string[] }> => {
    const res = await fetch(`${url}${pathAndQuery}`);
    const body = (await res.json()) as {
      status: 'success' | 'error';
      data: T;
      errorType?: string;
      error?: string;
      warnings?: string[];
    };
    if (body.status !== 'success')
      throw new PrometheusQueryError(expression, body.errorType ?? `HTTP ${res.status}`, body.error ?? '');
    return body.warnings ? { data: body.data, warnings: body.warnings } : { data: body.data };
  };
  return {
    url,
    query: (expression, time) => {
      const params = new URLSearchParams({ query: expression });
      if (time !== undefined) params.set('time', String(time));
      return api<QueryResult>(`/api/v1/query?${params}`, expression);
    },
    alerts: async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).data.alerts,
    targets: async () => (await api<{ activeTargets: Target[] }>('/api/v1/targets?state=active')).data.activeTargets,
    output: () => log,
    stop,
  };
}

export interface PromtoolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `promtool <args>`, with `stdin` as its input (e.g. `check metrics` reads the exposition text there). */
export function promtool(
  args: string[],
  stdin = '',
  executable = findExecutable('promtool') ?? 'promtool',
): Promise<PromtoolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
