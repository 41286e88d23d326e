import { ApplicationFailure } from '@temporalio/common';
import type { Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { pino } from 'pino';
import { expect } from 'vitest';
import type { ActivityDeps } from '../../activities/deps.js';
import { createActivities, type Activities } from '../../activities/index.js';
import { singleApplication } from '../helpers/single-application.js';
import { ItemRegistry } from '../../activities/item-registry.js';
import type { ComplianceClient } from '../../src/compliance/client.js';
import type { Sandbox } from '../../sandbox/server.js';
import { DEMO, useClients } from '../compliance/helpers.js';

export { DEMO, TODAY, idempotencyKey, invoiceNumber, useSandbox } from '../compliance/helpers.js';

/** Recognisable in any serialisation: if it shows up in a result, the callback token leaked. */
export const CALLBACK_TOKEN = 'TOKEN-must-never-leak-7f3a9c';

/**
 * Stands in for the callback receiver's minter. Port 9 (discard) on loopback: nothing answers, which is fine,
 * because these tests look at what the service stored and what the activity returned, not at deliveries.
 */
const fakeMinter = {
  mint: (workflowId: string) => `http://127.0.0.1:9/callbacks/${encodeURIComponent(workflowId)}/${CALLBACK_TOKEN}`,
};

export const silentLogger = pino({ level: 'silent' });

export interface ActivityHarness {
  activities: Activities;
  registry: ItemRegistry;
  deps: ActivityDeps;
}

export interface HarnessOptions {
  registry?: ConstructorParameters<typeof ItemRegistry>[1];
  deps?: Partial<ActivityDeps>;
}

/**
 * Builds the real activities over real HTTP against the file's sandbox, with the organisation-wide demo key
 * (as the worker runs: every call names its business). Each harness has its own item registry, like a
 * separate worker process; all share one client, closed after the file.
 */
export function useHarnessFactory(sandbox: () => Sandbox): (options?: HarnessOptions) => ActivityHarness {
  const client = useClients(sandbox);
  let compliance: ComplianceClient | undefined;
  return (options = {}) => {
    compliance ??= client(DEMO.keys.orgWide);
    const services = singleApplication({ compliance });
    const registry = new ItemRegistry(services, options.registry);
    const deps: ActivityDeps = {
      services,
      itemRegistry: registry,
      callbackUrls: fakeMinter,
      logger: silentLogger,
      ...options.deps,
    };
    return { activities: createActivities(deps), registry, deps };
  };
}

/** One harness for the whole file. */
export function useActivities(sandbox: () => Sandbox, options: HarnessOptions = {}): () => ActivityHarness {
  const factory = useHarnessFactory(sandbox);
  let harness: ActivityHarness | undefined;
  return () => (harness ??= factory(options));
}

/** The SDK logs every failed attempt at WARN; these tests fail activities on purpose. */
const sdkLogger = new DefaultLogger('ERROR');

/**
 * Runs one activity the way a worker would run attempt `attempt` of it. MockActivityEnvironment is the
 * SDK's own activity context (Context.current(), attempt number, cancellation), not a mock of any service:
 * every call still goes over HTTP to the sandbox.
 */
export function runActivity<I, R>(fn: (input: I) => Promise<R>, input: I, info: Partial<Info> = {}): Promise<R> {
  return new MockActivityEnvironment({ attempt: 1, ...info }, { logger: sdkLogger }).run(fn, input);
}

/** Awaits a promise that must reject with an ApplicationFailure and returns it. */
export async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok)
    throw new Error(`expected an ApplicationFailure, got a result: ${JSON.stringify(outcome.value).slice(0, 300)}`);
  expect(outcome.error).toBeInstanceOf(ApplicationFailure);
  return outcome.error as ApplicationFailure;
}

/** Compliance requests the sandbox answered on one route since `since` (epoch ms). */
export function requestsTo(sandbox: Sandbox, method: string, route: string, since = 0): number {
  return sandbox.stats.records({ service: 'compliance', since }).filter((r) => r.method === method && r.route === route)
    .length;
}

export const FISCAL_DOCUMENT_KEYS = [
  'error',
  'id',
  'receipt',
  'status',
  'taxes',
  'totals',
  'traderInvoiceNumber',
  'type',
];
