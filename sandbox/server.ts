import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildAccountingApp } from './accounting/app.js';
import { buildComplianceApp } from './compliance/app.js';
import { parseFixture, type SandboxFixture, type SandboxFixtureInput } from './fixture.js';
import { SandboxInspector } from './inspector.js';
import { FaultEngine } from './shared/faults.js';
import { OutageSchedule } from './shared/outages.js';
import { RequestStats } from './shared/request-stats.js';

export interface Sandbox {
  /** Base URL of the compliance service, e.g. http://127.0.0.1:4010 (its API is under /v1). */
  complianceUrl: string;
  /** Base URL of the accounting service. */
  accountingUrl: string;
  /** The fault rules of both services; add or remove rules at run time. */
  faults: FaultEngine;
  /** The outages of both services and of the tax authority; add or remove them at run time. */
  outages: OutageSchedule;
  /** Requests answered by both services. */
  stats: RequestStats;
  inspector: SandboxInspector;
  /** The validated fixture the sandbox started from. */
  fixture: SandboxFixture;
  /** Stops every timer (settlements, callbacks, batches) and both servers. */
  close(): Promise<void>;
}

export interface StartSandboxOptions {
  /** Default: the demo world (see default-fixture.ts). */
  fixture?: SandboxFixtureInput;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  compliancePort?: number;
  /** Default 0: a free port. */
  accountingPort?: number;
  /** Default: no logging. */
  logger?: Logger | false;
  /** Clock of both services (windows, expiry, timestamps); tests may move it. */
  now?: () => number;
  /** Source of the fault rules' probability rolls (default Math.random); `seededRandom(seed)` makes them reproducible. */
  random?: () => number;
}

function baseUrl(app: FastifyInstance, host: string): string {
  const { port } = app.server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts the compliance and accounting sandboxes on two ports, sharing one fault engine and one set of
 * request counters. Throws FixtureError for a fixture that is not valid.
 */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<Sandbox> {
  const fixture = parseFixture(options.fixture ?? {});
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? false;
  const now = options.now ?? Date.now;
  const faults = new FaultEngine(fixture.faults, options.random);
  const stats = new RequestStats();
  // Both apps reset the outages themselves: the compliance reset all of them, the accounting reset its own.
  const outages = new OutageSchedule({ fixture: fixture.outages, now });
  // The compliance inspection API's reset puts the shared parts back too.
  const resetShared = () => {
    faults.clear();
    for (const rule of fixture.faults) faults.add(rule);
    stats.reset();
  };

  const compliance = await buildComplianceApp({
    fixture: fixture.compliance,
    faults,
    outages,
    stats,
    logger: logger && logger.child({ service: 'compliance' }),
    now,
    onReset: resetShared,
  });
  const accounting = await buildAccountingApp({
    fixture: fixture.accounting,
    faults,
    outages,
    stats,
    logger: logger && logger.child({ service: 'accounting' }),
    now,
  });
  const close = async () => {
    await Promise.allSettled([compliance.close(), accounting.close()]);
    outages.close();
  };
  try {
    await compliance.listen({ host, port: options.compliancePort ?? 0 });
    await accounting.listen({ host, port: options.accountingPort ?? 0 });
  } catch (err) {
    await close();
    throw err;
  }
  const complianceUrl = baseUrl(compliance, host);
  const accountingUrl = baseUrl(accounting, host);
  return {
    complianceUrl,
    accountingUrl,
    faults,
    outages,
    stats,
    inspector: new SandboxInspector(complianceUrl, accountingUrl),
    fixture,
    close,
  };
}
