/**
 * `npm run worker` under a supervisor that stops it with SIGTERM to npm (a container whose command is the npm script,
 * a process manager that signals the process it started): npm passes the signal to the script's shell, which exits
 * without passing it on. The worker sees its parent gone, drains as on SIGTERM and exits, leaving no process behind.
 */
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { EXIT_MARGIN_MS } from '../../src/worker/process.js';
import { freePort } from '../../tools/free-port.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { uniqueTaskQueue } from '../helpers/temporal.js';
import { sandboxWorkerEnv } from '../helpers/worker-child.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const GRACE_MS = 2_000;
/** The parent checked once a second, then the drain: well within the grace and its margin. */
const STOPPED_WITHIN_MS = 1_000 + GRACE_MS + EXIT_MARGIN_MS;

let sandbox: Sandbox;
const leftRunning = new Set<number>();

beforeAll(async () => {
  sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
});

afterAll(async () => {
  for (const pid of leftRunning) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await sandbox?.close();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run worker stopped by a SIGTERM to npm', () => {
  it('drains and exits: the worker sees the script that started it end', { timeout: 120_000 }, async () => {
    const child = spawn('npm', ['run', '--silent', 'worker'], {
      cwd: root,
      env: {
        // This test's Node first, as CI puts the project's: the script checks its line.
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '',
        ...sandboxWorkerEnv(sandbox),
        PAYLOAD_ENCRYPTION: 'off',
        WORKFLOW_TASK_QUEUE: uniqueTaskQueue('npm-stop'),
        SHUTDOWN_GRACE_TIME: `${GRACE_MS / 1000}s`,
        HEALTH_BIND_ADDRESS: `127.0.0.1:${await freePort()}`,
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    const npmExited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

    const running = await eventually(
      async () => output.split('\n').find((line) => line.includes('"worker running"')),
      (line) => line !== undefined,
      { timeoutMs: 90_000, what: 'the worker running' },
    );
    const workerPid = (JSON.parse(running!) as { pid: number }).pid;
    leftRunning.add(workerPid);
    // The worker is the script shell's child, not npm's: npm's SIGTERM never reaches it.
    expect(workerPid).not.toBe(child.pid);

    const signalledAt = Date.now();
    child.kill('SIGTERM');
    await npmExited;
    await eventually(
      async () => alive(workerPid),
      (stillRunning) => !stillRunning,
      { timeoutMs: STOPPED_WITHIN_MS + 5_000, intervalMs: 100, what: `worker ${workerPid} gone` },
    );
    const stoppedMs = Date.now() - signalledAt;
    const stopLine = output.split('\n').find((line) => line.includes('shutting down: finishing in-flight tasks'));
    expect(stopLine, output).toContain('the npm script that started the worker ended');
    expect(stoppedMs).toBeLessThan(STOPPED_WITHIN_MS);
    console.log(`[npm-script-stop] worker ${workerPid} drained and exited ${stoppedMs} ms after npm's SIGTERM`);
  });
});
