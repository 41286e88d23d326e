/**
 * A stand-in for the business's own system: an HTTP server that verifies each delivery's Standard Webhooks
 * signature with the project's verifier, answers what the test says, and records every request.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../src/accounting/webhooks.js';
import type { PurchaseEvent } from '../../src/contracts/purchases-sync.js';

export interface Received {
  /** The webhook-id header. */
  id: string;
  event: PurchaseEvent | undefined;
  /** Whether the signature and timestamp verified. */
  verified: boolean;
  /** What the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Event ids answered with a 2xx, in order. */
  acknowledged(): string[];
  /** Sets the answer to each next request: a status, or a function of the request number (from 1). */
  answer(status: number | ((n: number) => number)): void;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startReceiver(secret: string): Promise<Receiver> {
  const received: Received[] = [];
  let decide: (n: number) => number = () => 200;
  const server = createServer((request, response) => {
    void body(request).then((raw) => {
      let event: PurchaseEvent | undefined;
      let verified = false;
      try {
        event = verifyWebhook({
          secret,
          headers: request.headers as Record<string, string>,
          rawBody: raw,
        }) as PurchaseEvent;
        verified = true;
      } catch {
        // Recorded as unverified; answered like any other request so the test sees what the sink does.
      }
      const status = decide(received.length + 1);
      received.push({ id: String(request.headers['webhook-id'] ?? ''), event, verified, status });
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/etims/purchases`,
    received,
    acknowledged: () => received.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.id),
    answer(status) {
      decide = typeof status === 'number' ? () => status : status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
