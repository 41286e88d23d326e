import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { canListen, freePort } from '../free-port.js';
import { resolveTemporalExecutable } from './resolver.js';
import type { CliSearchAttribute } from '../../src/contracts/search-attributes.js';

export interface DevServerOptions {
  /** gRPC frontend port; a free one by default. */
  port?: number;
  /** Web UI port; a free one by default unless headless. */
  uiPort?: number;
  /** Port of the server's own Prometheus `/metrics` (`--metrics-port`); 0 for a free one; absent: the CLI's default (a random port). */
  metricsPort?: number;
  /** Codec server the web UI decodes payloads with (`--ui-codec-endpoint`). */
  uiCodecEndpoint?: string;
  headless?: boolean;
  /** Interface to bind (default 127.0.0.1). */
  ip?: string;
  /** SQLite file for persistent state; in-memory when omitted. */
  dbFilename?: string;
  namespace?: string;
  searchAttributes: CliSearchAttribute[];
  logger?: (msg: string) => void;
  /** Skip the resolver and run this `temporal` binary. */
  executable?: string;
  /** How long to wait for the namespace to become usable (default 60 s). */
  startTimeoutMs?: number;
  /** More dynamic config, after the project's own (a later value of a key wins): a test of a server's limit. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

export interface DevServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  /** The server's own Prometheus endpoint, when a metrics port was asked for. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

const STOP_GRACE_MS = 10_000;
const OUTPUT_TAIL_BYTES = 8_192;

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const log = opts.logger ?? (() => {});
  const ip = opts.ip ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';
  const headless = opts.headless ?? false;
  const executable = opts.executable ?? (await resolveTemporalExecutable('temporal', { logger: opts.logger })).path;

  const [port, uiPort, metricsPort] = await resolvePorts(
    ip,
    opts.port,
    headless ? undefined : (opts.uiPort ?? 0),
    opts.metricsPort,
  );
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--namespace', namespace];
  args.push('--log-level', 'warn');
  // Fairness between businesses on shared queues (see deploy/temporal/dynamicconfig/development-sql.yaml).
  args.push('--dynamic-config-value', 'matching.enableFairness=true');
  // One partition per task queue: a queue's rate limit (and each fairness key's) is split between its partitions, so
  // with the default 4 a window held to 2 tasks a second by 2 pollers got about 1.7 (docs/tenancy.md); a dev server
  // needs no more than one partition's throughput.
  args.push(
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
  );
  // A build that no longer takes new workflows is shown drained seconds after its last pinned workflow closed, not
  // minutes (the server's defaults, kept by a production cluster: docs/deployment.md, "Rolling out a new build").
  args.push(
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"',
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusRefreshInterval="2s"',
  );
  // Every task queue a versioned worker polls is registered in its Worker Deployment Version, and the server refuses
  // more than 100 by default: each window serving several businesses has a compliance queue of its own
  // (docs/tenancy.md), so a fleet of many retail groups passes it (deploy/temporal/dynamicconfig/development-sql.yaml).
  args.push('--dynamic-config-value', 'matching.maxTaskQueuesInDeploymentVersion=1000');
  for (const [key, value] of Object.entries(opts.dynamicConfig ?? {}))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  if (uiPort === undefined) {
    args.push('--headless');
  } else {
    args.push('--ui-port', String(uiPort));
    if (opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  }
  if (metricsPort !== undefined) args.push('--metrics-port', String(metricsPort));
  if (opts.dbFilename) {
    await mkdir(path.dirname(path.resolve(opts.dbFilename)), { recursive: true });
    // WAL + NORMAL keeps a file-backed dev server fast enough for interactive use without risking corruption.
    args.push('--db-filename', opts.dbFilename);
    args.push('--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL');
  }
  for (const { name, type } of opts.searchAttributes) {
    args.push('--search-attribute', `${name}=${type}`);
  }

  const address = `${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${port}`;
  log(`starting ${executable} ${args.join(' ')}`);
  const child = spawn(executable, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureTail(child);
  const exited = waitForExit(child);
  killOnParentExit(child, exited.promise);

  try {
    await waitUntilReady({
      address,
      namespace,
      searchAttributeNames: opts.searchAttributes.map((sa) => sa.name),
      deadline: Date.now() + (opts.startTimeoutMs ?? 60_000),
      hasExited: () => child.exitCode !== null || child.signalCode !== null || exited.spawnError !== undefined,
    });
  } catch (err) {
    await stopChild(child, exited.promise);
    const reason = exited.spawnError
      ? `could not spawn ${executable}: ${exited.spawnError.message}`
      : err instanceof Error
        ? err.message
        : String(err);
    throw new Error(`Temporal dev server failed to start: ${reason}\n--- server output (tail) ---\n${output()}`);
  }

  const host = address.split(':')[0];
  const uiUrl = uiPort === undefined ? undefined : `http://${host}:${uiPort}`;
  const metricsUrl = metricsPort === undefined ? undefined : `http://${host}:${metricsPort}/metrics`;
  log(
    `Temporal dev server ready at ${address} (namespace ${namespace}${uiUrl ? `, UI ${uiUrl}` : ''}${metricsUrl ? `, metrics ${metricsUrl}` : ''})`,
  );
  return {
    address,
    namespace,
    uiUrl,
    ...(metricsUrl ? { metricsUrl } : {}),
    stop: () => stopChild(child, exited.promise),
  };
}

/** Ports of 0 or undefined mean "pick a free one". */
async function resolvePorts(
  ip: string,
  port: number | undefined,
  uiPort: number | undefined,
  metricsPort: number | undefined,
): Promise<[number, number | undefined, number | undefined]> {
  const pick = async (wanted: number | undefined): Promise<number> => {
    if (!wanted) return freePort(ip);
    // A requested port is checked too: if another server holds it, the readiness probe would happily talk to that one.
    if (!(await canListen(ip, wanted))) throw new Error(`cannot listen on ${ip}:${wanted} for the Temporal dev server`);
    return wanted;
  };
  const grpc = await pick(port);
  const ui = uiPort === undefined ? undefined : await pick(uiPort);
  const metrics = metricsPort === undefined ? undefined : await pick(metricsPort);
  return [grpc, ui, metrics];
}

interface ReadinessCheck {
  address: string;
  namespace: string;
  searchAttributeNames: string[];
  deadline: number;
  hasExited: () => boolean;
}

/** An open port is not enough: the namespace and search attributes are registered a moment after start-up. */
async function waitUntilReady(check: ReadinessCheck): Promise<void> {
  let lastError: unknown;
  while (Date.now() < check.deadline) {
    if (check.hasExited()) throw new Error('the server process exited early');
    if (await portAcceptsConnections(check.address)) {
      let connection: Connection | undefined;
      try {
        connection = await Connection.connect({ address: check.address, connectTimeout: 2_000 });
        await connection.workflowService.describeNamespace({ namespace: check.namespace });
        const { customAttributes } = await connection.operatorService.listSearchAttributes({
          namespace: check.namespace,
        });
        const missing = check.searchAttributeNames.filter((name) => !(name in (customAttributes ?? {})));
        if (missing.length === 0) return;
        lastError = new Error(`search attributes not registered yet: ${missing.join(', ')}`);
      } catch (err) {
        lastError = err;
      } finally {
        await connection?.close();
      }
    }
    await sleep(200);
  }
  const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`timed out waiting for ${check.address} namespace "${check.namespace}"${detail}`);
}

function portAcceptsConnections(address: string): Promise<boolean> {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator);
  const port = Number(address.slice(separator + 1));
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

function captureTail(child: ChildProcess): () => string {
  let tail = '';
  const append = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => tail || '(no output)';
}

function waitForExit(child: ChildProcess): { promise: Promise<void>; spawnError: Error | undefined } {
  const state: { promise: Promise<void>; spawnError: Error | undefined } = {
    spawnError: undefined,
    promise: new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', (err) => {
        state.spawnError = err;
        resolve();
      });
    }),
  };
  return state;
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const graceful = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), STOP_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!graceful) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Without this a crashed parent would leave an orphaned server holding its ports. */
function killOnParentExit(child: ChildProcess, exited: Promise<void>): void {
  const kill = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', kill);
  void exited.then(() => process.removeListener('exit', kill));
}
