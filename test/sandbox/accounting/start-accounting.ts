import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildAccountingApp } from '../../../sandbox/accounting/app.js';
import { defaultAccountingFixture } from '../../../sandbox/accounting/default-fixture.js';
import {
  AccountingFixtureSchema,
  type AccountingFixture,
  type AccountingFixtureInput,
} from '../../../sandbox/accounting/fixture.js';
import { FaultEngine } from '../../../sandbox/shared/faults.js';
import { RequestStats } from '../../../sandbox/shared/request-stats.js';

export interface RunningAccountingSandbox {
  app: FastifyInstance;
  url: string;
  faults: FaultEngine;
  stats: RequestStats;
  /** The sandbox's clock; tests may move it. */
  clock: { now: number | undefined };
  close(): Promise<void>;
}

/** Starts the accounting sandbox on a free loopback port, as a real HTTP server. */
export async function startAccountingSandbox(
  options: { fixture?: AccountingFixture | AccountingFixtureInput } = {},
): Promise<RunningAccountingSandbox> {
  const fixture = options.fixture ? AccountingFixtureSchema.parse(options.fixture) : defaultAccountingFixture;
  const faults = new FaultEngine();
  const stats = new RequestStats();
  const clock: { now: number | undefined } = { now: undefined };
  const app = await buildAccountingApp({ fixture, faults, stats, logger: false, now: () => clock.now ?? Date.now() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}`, faults, stats, clock, close: () => app.close() };
}

/** Reads the inspection API. */
export async function inspect<T>(sandbox: RunningAccountingSandbox, path: string): Promise<T> {
  const res = await fetch(`${sandbox.url}/__sandbox${path}`);
  if (!res.ok) throw new Error(`inspection ${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}
