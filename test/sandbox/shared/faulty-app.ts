import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { HttpTransport } from '../../../src/http/transport.js';
import { FaultEngine, type ServiceErrorBody } from '../../../sandbox/shared/faults.js';
import { RequestStats } from '../../../sandbox/shared/request-stats.js';

const complianceErrorBody: ServiceErrorBody = (_status, code, message) => ({ error: { code, message } });

/**
 * A small real service for the fault and stats tests: a write route that counts how often its
 * handler ran, a read route, a route that answers 429 on its own and an inspection route.
 */
export interface FaultyApp {
  app: FastifyInstance;
  baseUrl: string;
  faults: FaultEngine;
  stats: RequestStats;
  transport: HttpTransport;
  /** How many times the POST /v1/sales handler ran. */
  writes: () => number;
  close: () => Promise<void>;
}

export async function startFaultyApp(
  options: { random?: () => number; service?: 'compliance' | 'accounting'; maxRecords?: number } = {},
): Promise<FaultyApp> {
  const service = options.service ?? 'compliance';
  const faults = new FaultEngine([], options.random);
  const stats = new RequestStats(options.maxRecords === undefined ? {} : { maxRecords: options.maxRecords });
  const app = Fastify({ logger: false });
  stats.install(app, service);
  faults.install(app, service, complianceErrorBody);
  let writes = 0;

  // Stands in for the apps' authentication, which tags each request with its caller.
  app.addHook('preHandler', async (request) => {
    const appId = request.headers['x-app'];
    if (typeof appId === 'string') stats.tag(request, appId);
  });
  app.post('/v1/sales', async (_request, reply) => {
    writes += 1;
    return reply
      .code(201)
      .header('location', `/v1/sales/sale_${writes}`)
      .send({ data: { sale: { id: `sale_${writes}` } } });
  });
  app.get('/v1/sales/:id', async (request) => ({ data: { sale: { id: (request.params as { id: string }).id } } }));
  app.post('/v1/sales/:id/retry', async (request) => ({
    data: { sale: { id: (request.params as { id: string }).id } },
  }));
  app.get('/v1/busy', async (_request, reply) =>
    reply
      .code(429)
      .header('retry-after', '2')
      .send({ error: { code: 'rate_limited', message: 'slow down' } }),
  );
  app.get('/__sandbox/state', async () => ({ ok: true }));

  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const transport = new HttpTransport({ service, baseUrl: address, timeoutMs: 5_000 });
  return {
    app,
    baseUrl: address,
    faults,
    stats,
    transport,
    writes: () => writes,
    close: async () => {
      await transport.close();
      await app.close();
    },
  };
}

/**
 * Sends one raw HTTP/1.1 request and returns every byte the server wrote before the connection
 * closed, to prove that a dropped connection carried no HTTP answer at all.
 */
export function rawExchange(baseUrl: string, method: string, path: string, body = ''): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset is the expected way for a dropped connection to end.
      if (err.code !== 'ECONNRESET') reject(err);
    });
    socket.on('close', () => resolve(Buffer.concat(received).toString('latin1')));
    socket.write(
      `${method} ${path} HTTP/1.1\r\nhost: ${hostname}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}
