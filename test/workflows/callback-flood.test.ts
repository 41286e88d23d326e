import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { historyEvents, invoiceNumber, saleInput, signalNames, useSaleHarness } from './harness.js';

const h = useSaleHarness({ callbacks: true });
afterEach(async () => {
  await h.sandbox.inspector.clearFaults();
});

const FLOOD = 10_000;
const CONCURRENCY = 50;
// Loopback only: the receiver the harness started on 127.0.0.1.
const agent = new Agent({ connections: CONCURRENCY, pipelining: 1 });
afterAll(async () => {
  await agent.close();
});

/**
 * The scenario, 33× over: one valid callback URL of a sale still awaiting its outcome gets 10,000
 * POSTs. A quarter replay one delivery (a service redelivering in a loop); the rest carry fresh delivery ids
 * and vary the document and event as someone holding a leaked URL could.
 */
function floodBody(i: number, documentId: string): { body: string; headers: Record<string, string> } {
  const id = i % 4 === 0 ? 'evt_loop' : `evt_flood_${i}`;
  const doc = i % 4 === 2 ? `sal_bogus_${i}` : documentId;
  const event = i % 4 === 3 ? (i % 8 === 3 ? 'sale.failed' : `sale.other_${i}`) : 'sale.completed';
  return {
    body: JSON.stringify({
      id,
      event,
      createdAt: new Date().toISOString(),
      data: { sale: { id: doc, status: 'completed' } },
    }),
    headers: { 'content-type': 'application/json', 'x-callback-id': id },
  };
}

describe('a flood of callbacks on one valid URL', () => {
  it('keeps the history small and the sale still ends signed', async () => {
    const tin = invoiceNumber('HELD-');
    await h.sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${tin}$` },
      outcome: 'async',
      delayMs: 600_000,
    });
    const handle = await h.start(saleInput({ traderInvoiceNumber: tin, options: { refundWindowDays: 0 } }));
    const waiting = await h.waitFor(handle, (s) => s.step === 'awaiting_outcome');
    const documentId = waiting.sale!.id;
    const url = h.minter!.mint(handle.workflowId);
    const eventsBefore = (await historyEvents(handle)).length;

    const statuses = new Map<number, number>();
    const bodies = new Map<string, number>();
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < FLOOD; i = next++) {
          const { body, headers } = floodBody(i, documentId);
          const response = await request(url, { method: 'POST', body, headers, dispatcher: agent });
          const answer = (await response.body.json()) as { status?: string; error?: { code: string } };
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          const label = answer.status ?? answer.error?.code ?? 'none';
          bodies.set(label, (bodies.get(label) ?? 0) + 1);
        }
      }),
    );
    const floodMs = Date.now() - started;
    const eventsAfterFlood = (await historyEvents(handle)).length;

    // The authority decides; the sandbox delivers the genuine callback and the workflow confirms by reading.
    await h.sandbox.inspector.settle(documentId, 'completed');
    const result = await handle.result();
    const totalMs = Date.now() - started;

    const events = (await historyEvents(handle)).length;
    const signals = (await signalNames(handle)).filter((n) => n === 'callbackReceived').length;
    const attempts = await h.sandbox.inspector.waitForCallbackAttempts(documentId, (a) =>
      a.some((x) => x.status !== null),
    );
    console.log(
      `[flood] ${FLOOD} POSTs (concurrency ${CONCURRENCY}) in ${floodMs} ms; answers ${JSON.stringify(Object.fromEntries(statuses))} ` +
        `${JSON.stringify(Object.fromEntries(bodies))}; signals ${signals}; history ${eventsBefore} events before, ` +
        `${eventsAfterFlood} after the flood, ${events} at the end; signed ${totalMs} ms after the flood began; ` +
        `genuine delivery answered ${attempts.map((a) => a.status).join(',')}`,
    );

    expect(result.step).toBe('completed');
    expect(result.sale?.status).toBe('completed');
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(FLOOD);
    // Every POST acknowledged with a 2xx (the token is valid): nothing for a sender to redeliver, no 5xx.
    expect([...statuses.keys()].every((s) => s >= 200 && s < 300)).toBe(true);
    expect(signals).toBeLessThanOrEqual(5);
    expect(events).toBeLessThan(100);
    expect(attempts.every((a) => a.status !== null && a.status >= 200 && a.status < 300)).toBe(true);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
  }, 180_000);

  it('a callback for another sale right after the flood is still signalled promptly', async () => {
    // Each workflow has its own budget: the flood on one URL does not delay another sale's callback.
    const handle = await h.start(
      saleInput({ traderInvoiceNumber: invoiceNumber('ASYNC-'), options: { refundWindowDays: 0 } }),
    );
    const result = await handle.result();
    expect(result.sale?.status).toBe('completed');
    expect(await signalNames(handle)).toContain('callbackReceived');
  }, 60_000);
});
