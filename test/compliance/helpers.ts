import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { ComplianceClient, type ComplianceClientOptions } from '../../src/compliance/client.js';
import type { CreateSaleInput } from '../../src/compliance/requests.js';
import { ApiError } from '../../src/http/errors.js';
import { HttpTransport } from '../../src/http/transport.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox, type StartSandboxOptions } from '../../sandbox/server.js';
import { invoiceNumber } from '../helpers/invoice-number.js';

export { DEMO, invoiceNumber };

/** One sandbox per test file: started before the first test, closed after the last. */
export function useSandbox(options: StartSandboxOptions = {}): () => Sandbox {
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox(options);
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  return () => {
    if (!sandbox) throw new Error('the sandbox is not running (use it inside a test)');
    return sandbox;
  };
}

type ClientOverrides = Partial<Omit<ComplianceClientOptions, 'apiKey' | 'transport' | 'baseUrl'>> & {
  baseUrl?: string;
  timeoutMs?: number;
};

/**
 * Clients built in a test file, closed together after the file. The sandbox only accepts loopback
 * callback URLs in tests, so loopback callbacks are allowed.
 */
export function useClients(sandbox: () => Sandbox): (apiKey: string, overrides?: ClientOverrides) => ComplianceClient {
  const clients: ComplianceClient[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });
  return (apiKey, overrides = {}) => {
    const client = new ComplianceClient({
      baseUrl: sandbox().complianceUrl,
      apiKey,
      allowLoopbackCallbacks: true,
      ...overrides,
    });
    clients.push(client);
    return client;
  };
}

/**
 * A bare transport to the sandbox, for requests the client refuses to send (a page size outside 1..100,
 * a malformed key); closed after the file.
 */
export function useRawTransport(sandbox: () => Sandbox): () => HttpTransport {
  let transport: HttpTransport | undefined;
  afterAll(async () => {
    await transport?.close();
  });
  return () => (transport ??= new HttpTransport({ service: 'compliance', baseUrl: sandbox().complianceUrl }));
}

export function idempotencyKey(): string {
  return `test:${randomUUID()}`;
}

export const TODAY = '2025-06-30';

/** A Nairobi sale of one registered, stock-tracked item (sugar, band B). */
export function nairobiSale(overrides: Partial<CreateSaleInput> = {}): CreateSaleInput {
  return {
    traderInvoiceNumber: invoiceNumber(),
    saleDate: TODAY,
    lines: [{ itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 }],
    ...overrides,
  };
}

/** Awaits a promise that must reject with an ApiError and returns it. */
export async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected an ApiError, got a result: ${JSON.stringify(outcome.value).slice(0, 300)}`);
  expect(outcome.error).toBeInstanceOf(ApiError);
  return outcome.error as ApiError;
}

/** A port nothing listens on: bound once by the OS, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
