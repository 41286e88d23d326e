/**
 * The fast layer's clock: results awaited together and runs terminated mid-task must leave the time-skipping server's
 * clock as they found it, or every later `env.sleep()` of the file runs at wall speed and its test times out.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { echo, EchoActivities } from '../fixtures/workflows/echo.js';
import { createTimeSkippingEnv, terminateKeepingClock, TIME_SKIPPING_NAMESPACE } from '../helpers/time-skipping.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url));
const HOUR = 3_600_000;

/** Whether an hour of `env.sleep()` passes within `wallMs`; the sleep goes on in the background if not. */
async function skipsAnHour(env: TestWorkflowEnvironment, wallMs: number) {
  const sleeping = env.sleep(HOUR).then(() => true);
  return { skipped: await Promise.race([sleeping, sleep(wallMs).then(() => false)]), sleeping };
}

describe('the time-skipping clock', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('still skips an hour at once after two results were awaited together while an activity ran', async () => {
    const taskQueue = `clock-${randomUUID().slice(0, 8)}`;
    let activityRunning = false;
    const activities: EchoActivities = {
      async shout(message) {
        activityRunning = true;
        // In flight while both results wait: the server holds a lock for it until it completes.
        await sleep(1_000);
        return message.toUpperCase();
      },
    };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: TIME_SKIPPING_NAMESPACE,
      taskQueue,
      workflowsPath,
      activities,
    });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start<typeof echo>('echo', {
        taskQueue,
        workflowId: `clock-${randomUUID()}`,
        args: ['biz_clock', 'hello'],
      });
      while (!activityRunning) await sleep(10);
      expect(await Promise.all([handle.result(), handle.result()])).toEqual(['HELLO from echo', 'HELLO from echo']);

      const before = await env.currentTimeMs();
      const { skipped } = await skipsAnHour(env, 10_000);
      expect(skipped, 'an hour of env.sleep() took over 10 s of wall time: the clock stayed locked').toBe(true);
      expect((await env.currentTimeMs()) - before).toBeGreaterThanOrEqual(HOUR);
    });
  });

  // No worker polls these queues: the run's first workflow task stays outstanding until it is terminated.
  const startIdle = () =>
    env.client.workflow.start<typeof echo>('echo', {
      taskQueue: `no-worker-${randomUUID().slice(0, 8)}`,
      workflowId: `clock-${randomUUID()}`,
      args: ['biz_clock', 'hello'],
    });

  it('keeps a lock of the clock when a run is terminated with its workflow task outstanding (what terminateKeepingClock makes up for)', async () => {
    await (await startIdle()).terminate('test');
    const { skipped, sleeping } = await skipsAnHour(env, 3_000);
    // If a newer test server releases the lock itself, terminateKeepingClock must stop releasing it too.
    expect(skipped, 'the test server released the lock of a terminated run by itself').toBe(false);
    await env.connection.testService!.unlockTimeSkipping({});
    await sleeping;
  });

  it('leaves the clock free when terminateKeepingClock ends a run with its workflow task outstanding', async () => {
    expect(await terminateKeepingClock(env, await startIdle(), 'test', 0)).toBe(true);
    const { skipped } = await skipsAnHour(env, 10_000);
    expect(skipped, 'an hour of env.sleep() took over 10 s of wall time: the clock stayed locked').toBe(true);
  });
});
