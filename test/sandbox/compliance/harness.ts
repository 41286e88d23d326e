import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { fastFixture } from '../../helpers/fast-fixture.js';
import { forwardTo } from '../../helpers/forward.js';
import { invoiceNumber } from '../../helpers/invoice-number.js';
import type { AddressInfo } from 'node:net';
import { ErrorBodySchema, SaleEnvelopeSchema, type ErrorBody, type Sale } from '../../../src/compliance/schemas.js';
import { HttpTransport, type HttpMethod, type QueryValue } from '../../../src/http/transport.js';
import type { ComplianceFixtureInput } from '../../../sandbox/compliance/fixture-schema.js';
import { DEMO } from '../../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../../sandbox/server.js';
import type { FaultRuleInput } from '../../../sandbox/shared/faults.js';

export { DEMO, fastFixture, invoiceNumber };

export interface TestSandbox {
  sandbox: Sandbox;
  /** A client of the compliance API using `key` (default: the key bound to the Nairobi business). */
  client(key?: string): TestClient;
  close(): Promise<void>;
}

export async function startTestSandbox(
  options: { compliance?: ComplianceFixtureInput; faults?: FaultRuleInput[] } = {},
): Promise<TestSandbox> {
  const sandbox = await startSandbox({
    fixture: { compliance: options.compliance ?? fastFixture(undefined, 'sandbox'), faults: options.faults ?? [] },
  });
  const clients: TestClient[] = [];
  return {
    sandbox,
    client(key = DEMO.keys.nairobi) {
      const client = new TestClient(sandbox.complianceUrl, key);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sandbox.close();
    },
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  json: unknown;
}

/** A bare client of the compliance API over the shared HTTP transport: real requests, raw answers. */
export class TestClient {
  private readonly transport: HttpTransport;

  constructor(
    baseUrl: string,
    private readonly key: string | undefined,
  ) {
    this.transport = new HttpTransport({ service: 'compliance', baseUrl, timeoutMs: 10_000 });
  }

  async call(
    method: HttpMethod,
    path: string,
    options: {
      query?: Record<string, QueryValue>;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
      key?: string | null;
    } = {},
  ): Promise<Answer> {
    const key = options.key === undefined ? this.key : options.key;
    const headers: Record<string, string> = { ...(key ? { 'x-api-key': key } : {}), ...options.headers };
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const res = await this.transport.send({
      operation: `${method} ${path}`,
      method,
      path,
      ...(options.query ? { query: options.query } : {}),
      headers,
      ...(body === undefined ? {} : { body }),
      idempotent: method === 'GET',
    });
    let json: unknown;
    try {
      json = res.body.length === 0 ? undefined : JSON.parse(res.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body: res.body, json };
  }

  get(path: string, query?: Record<string, QueryValue>): Promise<Answer> {
    return this.call('GET', path, query ? { query } : {});
  }

  post(
    path: string,
    body?: unknown,
    options: { query?: Record<string, QueryValue>; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    return this.call('POST', path, { ...options, ...(body === undefined ? {} : { body }) });
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

/** The sale in a success answer, parsed with the client's schema so shape drift fails the test. */
export function saleOf(answer: Answer): Sale {
  return SaleEnvelopeSchema.parse(answer.json).data.sale;
}

/** The error in an error answer, parsed with the client's schema. */
export function errorOf(answer: Answer): ErrorBody['error'] {
  return ErrorBodySchema.parse(answer.json).error;
}

/** A sale request of registered Nairobi items (a 16 % and a 0 % line). */
export function saleRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    traderInvoiceNumber: invoiceNumber(),
    saleDate: '2025-06-01',
    lines: [
      { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
      { itemId: DEMO.items.milk, quantity: 1, unitPrice: 65 },
    ],
    ...overrides,
  };
}

export interface ReceivedCallback {
  headers: Record<string, string | string[] | undefined>;
  body: { id: string; event: string; createdAt: string; data: { sale: Sale } };
  at: number;
}

/** A real HTTP receiver of result callbacks that answers each request with the next scripted status. */
export class CallbackReceiver {
  private constructor(
    private readonly app: FastifyInstance,
    readonly url: string,
    readonly received: ReceivedCallback[],
  ) {}

  static async start(
    options: { statuses?: number[]; fallbackStatus?: number; delayMs?: number } = {},
  ): Promise<CallbackReceiver> {
    const app = Fastify({ logger: false });
    const script = [...(options.statuses ?? [])];
    const received: ReceivedCallback[] = [];
    app.post('/hooks/:token', async (request, reply) => {
      received.push({ headers: request.headers, body: request.body as ReceivedCallback['body'], at: Date.now() });
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      return reply.code(script.shift() ?? options.fallbackStatus ?? 200).send({ ok: true });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    return new CallbackReceiver(app, `http://127.0.0.1:${port}/hooks/tok_${process.pid}`, received);
  }

  /** Waits until at least `count` callbacks arrived. */
  async waitFor(count: number, timeoutMs = 5_000): Promise<ReceivedCallback[]> {
    await eventually(
      () => this.received.length,
      (received) => received >= count,
      { timeoutMs, intervalMs: 10, what: `${count} callbacks` },
    );
    return this.received;
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

/** Callback receivers for a test file: each test starts those it needs, and all are closed after it. */
export function useCallbackReceivers(): (
  options?: Parameters<typeof CallbackReceiver.start>[0],
) => Promise<CallbackReceiver> {
  const open: CallbackReceiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((receiver) => receiver.close()));
  });
  return async (options) => {
    const receiver = await CallbackReceiver.start(options);
    open.push(receiver);
    return receiver;
  };
}

/**
 * One sandbox per test file, reset before every test, with a client on `key` (default: the Nairobi key). The
 * two values are stand-ins that forward to the real ones created in `beforeAll`, so files can keep plain `sbx.`
 * and `client.` references instead of repeating the set-up.
 */
export function useTestSandbox(options: { compliance?: ComplianceFixtureInput; key?: string } = {}): {
  sbx: TestSandbox;
  client: TestClient;
} {
  let current: { sbx: TestSandbox; client: TestClient } | undefined;
  beforeAll(async () => {
    const sbx = await startTestSandbox(options.compliance ? { compliance: options.compliance } : {});
    current = { sbx, client: sbx.client(options.key ?? DEMO.keys.nairobi) };
  });
  afterAll(() => current?.sbx.close());
  beforeEach(() => current?.sbx.sandbox.inspector.reset());
  return { sbx: forwardTo(() => current?.sbx), client: forwardTo(() => current?.client) };
}
