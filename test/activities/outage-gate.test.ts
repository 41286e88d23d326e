import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { outageBoard } from '../../activities/outage-gate.js';

/** A Temporal client that finds no watch running: only what the process saw itself counts. */
const noWatch = {
  workflow: {
    getHandle: () => ({
      describe: async () => {
        throw new Error('workflow not found');
      },
    }),
  },
} as unknown as Client;

const QUEUE = 'sales.compliance-api';

/** A Temporal client whose watch is running and holds `waiting` sales (settable), counting its reads. */
function runningWatch(waiting: { service: number; authority: number }) {
  const watch = { waiting, reads: 0, client: undefined as unknown as Client };
  watch.client = {
    workflow: {
      getHandle: () => ({
        describe: async () => ({ status: { name: 'RUNNING' } }),
        query: async () => {
          watch.reads++;
          return { waiting: watch.waiting, since: { service: null, authority: null }, probes: 0, released: 0 };
        },
      }),
    },
  } as unknown as Client;
  return watch;
}

describe('the outage board', () => {
  it('knows nothing is down when no watch runs and no call of this process met an outage', async () => {
    expect([...(await outageBoard(noWatch).down(QUEUE, 'app-a'))]).toEqual([]);
  });

  it('suspects the service for 15 s after two calls in a row met an outage, for that application only', async () => {
    let now = 1_000_000;
    const board = outageBoard(noWatch, () => now);
    board.observe(QUEUE, 'app-a', 'outage');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
    board.observe(QUEUE, 'app-a', 'outage');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual(['service']);
    expect([...(await board.down(QUEUE, 'app-b'))]).toEqual([]);
    now += 14_999;
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual(['service']);
    now += 1;
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
  });

  it('clears the suspicion as soon as a call is answered', async () => {
    const board = outageBoard(noWatch, () => 0);
    for (let i = 0; i < 3; i++) board.observe(QUEUE, 'app-a', 'outage');
    board.observe(QUEUE, 'app-a', 'answered');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
    // An answer between failures starts the count again.
    board.observe(QUEUE, 'app-a', 'outage');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
  });

  it('reads the sides the watch holds sales on, and reads again only after 5 s', async () => {
    let now = 0;
    const watch = runningWatch({ service: 0, authority: 2 });
    const board = outageBoard(watch.client, () => now);
    // Not read by a process that met no outage of the application lately.
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
    board.observe(QUEUE, 'app-a', 'outage');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual(['authority']);
    watch.waiting = { service: 0, authority: 0 };
    now += 4_999;
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual(['authority']);
    now += 1;
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
  });

  it('reads the watch at once after a sale of this process joined it: an authority outage fails no call', async () => {
    let now = 0;
    const watch = runningWatch({ service: 0, authority: 0 });
    const board = outageBoard(watch.client, () => now);
    board.observe(QUEUE, 'app-a', 'answered');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
    expect(watch.reads).toBe(0);
    board.observe(QUEUE, 'app-a', 'joined');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
    // Another sale joins within the 5 s the last read is kept: read again, not answered from that read.
    watch.waiting = { service: 0, authority: 1 };
    now += 1_000;
    board.observe(QUEUE, 'app-a', 'joined');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual(['authority']);
    expect(watch.reads).toBe(2);
    expect([...(await board.down(QUEUE, 'app-b'))]).toEqual([]);
  });

  it('reads the watch again once a call is answered while the last read said the service was down', async () => {
    const watch = runningWatch({ service: 3, authority: 0 });
    const board = outageBoard(watch.client, () => 0);
    board.observe(QUEUE, 'app-a', 'joined');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual(['service']);
    // The watch sent its sales; one of them was answered: the next call does not wait out the 5 s of the last read.
    watch.waiting = { service: 0, authority: 0 };
    board.observe(QUEUE, 'app-a', 'answered');
    expect([...(await board.down(QUEUE, 'app-a'))]).toEqual([]);
    expect(watch.reads).toBe(2);
    // Answered again with nothing read as down: no read more.
    board.observe(QUEUE, 'app-a', 'answered');
    await board.down(QUEUE, 'app-a');
    expect(watch.reads).toBe(2);
  });
});
