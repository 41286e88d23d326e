/**
 * `src/cli/codec-server.ts` as a process, as the image runs it: beyond loopback it will not start without a token
 * (exit 2 naming the variables), and with one from a file it guards every payload route.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { newKey } from './helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'codec-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'codec-cli-token-from-a-file-0123456789abcdef';
const PAYLOAD_KEYS = `k1:${newKey().toString('base64')}`;

interface Running {
  /** Resolves with the exit code and everything printed. */
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Resolves with the URL once the server logs that it listens. */
  listening: Promise<string>;
  stop(): void;
}

function codecServer(env: Record<string, string>): Running {
  const child = spawn(tsx, ['src/cli/codec-server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_FORMAT: 'json', ...env },
  });
  let stdout = '';
  let stderr = '';
  let onListening: (url: string) => void = () => {};
  const listening = new Promise<string>((resolve) => (onListening = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const line = stdout.split('\n').find((l) => l.includes('"codec server listening"'));
    if (line) onListening((JSON.parse(line) as { url: string }).url);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { exited, listening, stop: () => child.kill('SIGTERM') };
}

describe('the codec server process', () => {
  it('on 0.0.0.0 without a token: exit 2, naming CODEC_HOST and CODEC_AUTH_TOKEN', async () => {
    const server = codecServer({ PAYLOAD_KEYS, CODEC_HOST: '0.0.0.0', CODEC_PORT: '0' });
    const listeningAt = await Promise.race([server.listening, server.exited.then(() => undefined)]);
    server.stop();
    expect(listeningAt, 'it listened without a token').toBeUndefined();
    const { code, stdout, stderr } = await server.exited;
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^configuration error: CODEC_HOST is 0\.0\.0\.0: .*set CODEC_AUTH_TOKEN \(or CODEC_AUTH_TOKEN_FILE\)/,
    );
    expect(stdout).not.toContain('listening');
  }, 60_000);

  it('on 0.0.0.0 with CODEC_AUTH_TOKEN_FILE: listens, and /decode and /encode need the token', async () => {
    const tokenFile = join(dir, 'codec-auth-token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const server = codecServer({
      PAYLOAD_KEYS,
      CODEC_HOST: '0.0.0.0',
      CODEC_PORT: '0',
      CODEC_AUTH_TOKEN_FILE: tokenFile,
    });
    try {
      const url = await Promise.race([
        server.listening,
        server.exited.then(({ code, stderr }) => {
          throw new Error(`exited ${code}: ${stderr}`);
        }),
      ]);
      for (const route of ['/decode', '/encode']) {
        const post = (headers: Record<string, string>) =>
          fetch(`${url}${route}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...headers },
            body: '{}',
          });
        expect((await post({})).status, route).toBe(401);
        expect((await post({ Authorization: 'Bearer wrong-token-0123456789abcdef0123456789' })).status, route).toBe(
          401,
        );
        expect((await post({ Authorization: `Bearer ${TOKEN}` })).status, route).toBe(200);
      }
    } finally {
      server.stop();
    }
    const { code, stdout, stderr } = await server.exited;
    expect(code).toBe(0);
    expect(stdout + stderr).not.toContain(TOKEN);
  }, 60_000);
});
