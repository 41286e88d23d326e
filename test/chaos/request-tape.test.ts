import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestStats } from '../../sandbox/shared/request-stats.js';
import { RequestTape } from '../../tools/chaos/request-tape.js';

describe("the chaos run's request tape", () => {
  // The sandbox's own request counter, keeping its latest 5 requests one by one, on a real app.
  const stats = new RequestStats({ maxRecords: 5 });
  const app = Fastify();
  stats.install(app, 'compliance');
  app.get('/v1/sales/:id', async () => ({ data: 'read' }));

  beforeAll(() => app.ready());
  afterAll(() => app.close());

  const send = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) await app.inject({ method: 'GET', url: `/v1/sales/s${i}` });
  };

  it('keeps every request past the end of the sandbox log when read often enough, and counts those it missed', async () => {
    const tape = new RequestTape(stats);
    await send(0, 3);
    tape.read();
    expect(tape.records().map((r) => r.path)).toEqual(['/v1/sales/s0', '/v1/sales/s1', '/v1/sales/s2']);
    // Read twice in a row: nothing new, nothing taken twice.
    tape.read();
    await send(3, 4);
    tape.read();
    expect(tape.records().map((r) => r.path)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `/v1/sales/s${i}`));
    expect(tape.missed()).toBe(0);
    // 8 requests between two reads, in a log of 5: 3 scrolled out before they could be read.
    await send(7, 8);
    tape.read();
    expect(tape.records()).toHaveLength(12);
    expect(tape.records().at(-1)!.path).toBe('/v1/sales/s14');
    expect(tape.records()[7]!.path).toBe('/v1/sales/s10');
    expect(tape.missed()).toBe(3);
  });
});
