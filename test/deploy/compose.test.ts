/**
 * docker-compose.yml as `docker-compose config` resolves it (no Docker engine needed): secrets reach the containers
 * as files only, the codec server cannot run without its token, every port stays on 127.0.0.1 unless its own switch
 * says otherwise (the callback receiver apart from everything else), and every long-running service has a health
 * check; the worker's is run here against stand-in endpoints.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountingClient } from '../../src/accounting/client.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { codecServerOptionsFromEnv } from '../../src/codec/server.js';
import { SECRET_VARIABLES } from '../../src/config/env.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { parseDuration } from '../../src/contracts/duration.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { EXIT_MARGIN_MS } from '../../src/worker/process.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

interface Service {
  environment?: Record<string, string>;
  ports?: Array<string | { host_ip?: string; published?: string | number; target?: number }>;
  secrets?: Array<string | { source: string; target?: string }>;
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  restart?: string;
  command?: string[];
  volumes?: Array<string | { source?: string; target: string }>;
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string }>;
}

function hasComposeTool(): boolean {
  try {
    execFileSync('docker-compose', ['version'], { stdio: 'ignore' });
    execFileSync('python3', ['-c', 'import yaml'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const resolved = new Map<string, Promise<Compose>>();

/** `docker-compose config` with only these variables (and PATH), parsed by the YAML library docker-compose ships with. */
function resolve(vars: Record<string, string> = {}, profile?: string): Promise<Compose> {
  const key = JSON.stringify([vars, profile]);
  if (!resolved.has(key)) resolved.set(key, resolveNow(vars, profile));
  return resolved.get(key)!;
}

async function resolveNow(vars: Record<string, string>, profile: string | undefined): Promise<Compose> {
  const args = [...(profile ? ['--profile', profile] : []), '-f', 'docker-compose.yml', 'config'];
  const { stdout } = await run('docker-compose', args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...vars } });
  const parsed = execFileSync(
    'python3',
    ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
    { input: stdout },
  );
  return JSON.parse(parsed.toString()) as Compose;
}

/** Every published port as `host_ip:published->target`, per service. */
function published(compose: Compose): string[] {
  const out: string[] = [];
  for (const [name, service] of Object.entries(compose.services)) {
    for (const port of service.ports ?? []) {
      if (typeof port === 'string') {
        const [hostIp, hostPort, target] = port.replace(/\/tcp$/, '').split(':');
        out.push(`${name} ${hostIp}:${hostPort}->${target}`);
      } else {
        out.push(`${name} ${port.host_ip ?? '0.0.0.0'}:${port.published}->${port.target}`);
      }
    }
  }
  return out.sort();
}

/** Services that run and stay up (the schema and namespace jobs run once and exit). */
const JOBS = new Set(['temporal-admin-tools', 'temporal-create-namespace']);

describe.skipIf(!hasComposeTool())('docker-compose.yml', () => {
  it('publishes everything on 127.0.0.1 by default', async () => {
    const ports = published(await resolve({}, 'sandbox'));
    expect(ports.length).toBeGreaterThanOrEqual(7);
    for (const port of ports) expect(port, port).toMatch(/ 127\.0\.0\.1:/);
  });

  it('CALLBACK_PUBLISH_IP opens the callback receiver alone; the old single PUBLISH_IP opens nothing', async () => {
    const ports = published(await resolve({ CALLBACK_PUBLISH_IP: '0.0.0.0' }, 'sandbox'));
    expect(ports.filter((p) => !/ 127\.0\.0\.1:/.test(p))).toEqual(['worker 0.0.0.0:8787->8787']);
    const legacy = published(await resolve({ PUBLISH_IP: '0.0.0.0' }, 'sandbox'));
    for (const port of legacy) expect(port, port).toMatch(/ 127\.0\.0\.1:/);
    // The operators' switch moves the operator ports, never the callback receiver.
    const operator = published(await resolve({ OPERATOR_PUBLISH_IP: '10.0.0.5' }, 'sandbox'));
    expect(operator.filter((p) => p.startsWith('worker '))).toEqual(['worker 127.0.0.1:8787->8787']);
    expect(operator.filter((p) => p.includes(' 10.0.0.5:')).map((p) => p.split(' ')[0])).toEqual(
      expect.arrayContaining(['codec-server', 'temporal', 'temporal-ui', 'prometheus', 'sandbox']),
    );
  });

  it('secrets reach the containers as files only, each *_FILE naming a secret the service mounts', async () => {
    const compose = await resolve({}, 'sandbox');
    const secretNames = [...SECRET_VARIABLES, 'PAYLOAD_KEYS'];
    for (const [name, service] of Object.entries(compose.services)) {
      const env = service.environment ?? {};
      for (const secret of secretNames) expect(env[secret], `${name}: ${secret} as a plain variable`).toBeUndefined();
      const mounted = new Set((service.secrets ?? []).map((s) => (typeof s === 'string' ? s : s.source)));
      for (const [key, value] of Object.entries(env)) {
        if (!key.endsWith('_FILE')) continue;
        const match = /^\/run\/secrets\/([a-z0-9-]+)$/.exec(value);
        expect(match, `${name}: ${key}=${value}`).not.toBeNull();
        expect(mounted.has(match![1]!), `${name}: ${key} needs the secret ${match![1]}`).toBe(true);
        expect(compose.secrets?.[match![1]!]?.file, `secret ${match![1]} has a file`).toBeTruthy();
      }
    }
    const worker = compose.services.worker!.environment!;
    for (const secret of [
      ...SECRET_VARIABLES.filter((s) => s !== 'CODEC_AUTH_TOKEN' && s !== 'TEMPORAL_API_KEY'),
      'PAYLOAD_KEYS',
    ]) {
      expect(worker[`${secret}_FILE`], `worker: ${secret}_FILE`).toBeDefined();
    }
  });

  it('the codec server listens beyond loopback in its container, so it gets its token (which it requires there)', async () => {
    const codec = (await resolve({}, 'sandbox')).services['codec-server']!;
    expect(codec.environment).toMatchObject({
      CODEC_HOST: '0.0.0.0',
      CODEC_AUTH_TOKEN_FILE: '/run/secrets/codec-auth-token',
    });
    expect((codec.secrets ?? []).map((s) => (typeof s === 'string' ? s : s.source))).toContain('codec-auth-token');
    // test/codec/cli.test.ts: on 0.0.0.0 without a readable token the process exits 2 naming CODEC_AUTH_TOKEN.
  });

  it('every long-running service has a health check', async () => {
    const compose = await resolve({}, 'sandbox');
    const services = Object.entries(compose.services).filter(([name]) => !JOBS.has(name));
    expect(services.map(([name]) => name).sort()).toEqual(
      ['codec-server', 'postgresql', 'prometheus', 'sandbox', 'temporal', 'temporal-ui', 'worker'].sort(),
    );
    for (const [name, service] of services) expect(service.healthcheck?.test?.length, name).toBeGreaterThan(1);
  });

  it('Prometheus reads its alert rules from next to its configuration, where prometheus.yml names them', async () => {
    const prometheus = (await resolve()).services.prometheus!;
    const mounts = (prometheus.volumes ?? []).map((v) =>
      typeof v === 'string' ? v.split(':').slice(0, 2).join(':') : `${v.source}:${v.target}`,
    );
    expect(mounts).toEqual(
      expect.arrayContaining([
        `${join(root, 'deploy/prometheus/prometheus.yml')}:/etc/prometheus/prometheus.yml`,
        `${join(root, 'deploy/prometheus/rules.yml')}:/etc/prometheus/rules.yml`,
      ]),
    );
  });
});

describe.skipIf(!hasComposeTool())(
  'deploy/secrets/init.sh --sandbox, then the services as compose configures them',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'compose-secrets-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** The service's environment, with /run/secrets/<name> where compose mounts the file of that name. */
    async function containerEnv(service: string): Promise<Record<string, string>> {
      const env = (await resolve({}, 'sandbox')).services[service]!.environment ?? {};
      return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(/^\/run\/secrets\//, `${dir}/`)]));
    }

    it('the worker and the codec server read every secret from the files; the codec server refuses to run without its token', async () => {
      await run(join(root, 'deploy/secrets/init.sh'), ['--sandbox'], {
        env: { PATH: process.env.PATH ?? '', SECRETS_DIR: dir },
      });
      const settings = loadWorkerSettings({
        ...(await containerEnv('worker')),
        TEMPORAL_CONFIG_FILE: join(dir, 'none.toml'),
      });
      expect(settings.services.compliance?.apiKey).toMatch(/^cmp_sk_test_/);
      expect(settings.services.accounting?.apiKey).toMatch(/^sk_development_/);
      expect(settings.services.accounting?.clientSecret).toBeUndefined(); // an empty file is unset
      // The sandbox is reached in plain http over the compose network, which the worker's clients are told to allow.
      await new ComplianceClient(settings.services.compliance!).close();
      await new AccountingClient(settings.services.accounting!).close();
      expect(settings.encryption.encrypted).toBe(true);
      expect(settings.worker.callbackSecret?.length).toBeGreaterThanOrEqual(32);

      const codecEnv = await containerEnv('codec-server');
      expect(codecServerOptionsFromEnv(codecEnv).authToken?.length).toBeGreaterThanOrEqual(32);
      unlinkSync(join(dir, 'codec-auth-token'));
      expect(() => codecServerOptionsFromEnv(codecEnv)).toThrow(
        /^CODEC_AUTH_TOKEN_FILE: cannot read .*codec-auth-token \(ENOENT\)$/,
      );
    });
  },
);

describe.skipIf(!hasComposeTool())("the worker's health check, run against stand-in endpoints", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  async function serve(routes: Record<string, [number, string]>): Promise<number> {
    const server = createServer((req, res) => {
      const [status, body] = routes[req.url ?? ''] ?? [404, 'no'];
      res.writeHead(status).end(body);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as AddressInfo).port;
  }

  async function healthcheck(env: Record<string, string>): Promise<number> {
    const worker = (await resolve({}, 'sandbox')).services.worker!;
    const [kind, ...command] = worker.healthcheck!.test;
    expect(kind).toBe('CMD');
    try {
      await run(command[0]!, command.slice(1), { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 15_000 });
      return 0;
    } catch (err) {
      return (err as { code: number }).code;
    }
  }

  it('healthy when the worker says it is ready; not when it answers 503 (starting, stopping), nor when nothing listens', async () => {
    const ready = await serve({ '/readyz': [200, '{"status":"ok","checks":{"workers":"ok"}}'] });
    expect(await healthcheck({ HEALTH_BIND_ADDRESS: `0.0.0.0:${ready}` })).toBe(0);
    const stopping = await serve({ '/readyz': [503, '{"status":"failing","checks":{"shutdown":"stopping"}}'] });
    expect(await healthcheck({ HEALTH_BIND_ADDRESS: `0.0.0.0:${stopping}` })).toBe(1);
    expect(await healthcheck({ HEALTH_BIND_ADDRESS: '127.0.0.1:9' })).toBe(1);
  });

  it("asks the worker's own health server, whose address and grace the worker reads from its settings", async () => {
    const worker = (await resolve({}, 'sandbox')).services.worker!;
    const { HEALTH_BIND_ADDRESS, SHUTDOWN_GRACE_TIME } = worker.environment ?? {};
    const config = loadWorkerConfig({ HEALTH_BIND_ADDRESS, SHUTDOWN_GRACE_TIME });
    expect(config.healthBindAddress).toBe('0.0.0.0:9465');
    expect(worker.healthcheck!.test.join(' ')).toContain("'/readyz'");
    // Compose's SIGKILL comes after stop_grace_period: the process must have exited by then.
    const stopGraceMs = parseDuration(worker.stop_grace_period ?? '10s') ?? 0;
    expect(stopGraceMs).toBeGreaterThanOrEqual(config.shutdownGraceMs + EXIT_MARGIN_MS);
  });
});
