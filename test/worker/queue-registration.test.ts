/**
 * A task queue the server refuses to hold in a worker's deployment version is said at once: against a real dev server
 * whose versions may hold only 3 queues, versioned workers poll 5, and the check names the refused ones and their
 * businesses, sets the gauge (recorded by a stand-in recorder: the Prometheus side is deploy/prometheus's rule tests)
 * and turns readiness to 503 naming the first.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { MetricsRecorder } from '../../src/metrics/recorder.js';
import { watchQueueRegistration, type PolledQueue } from '../../src/worker/queue-registration.js';
import { readinessOf } from '../../src/worker/readiness.js';
import { startDevServer } from '../../tools/temporal-cli/dev-server.js';
import { eventually } from '../helpers/eventually.js';

describe('a task queue the deployment version does not hold', () => {
  it('is named with its businesses, counted, and makes the process unready', async () => {
    const server = await startDevServer({
      headless: true,
      searchAttributes: [],
      dynamicConfig: { 'matching.maxTaskQueuesInDeploymentVersion': 3 },
    });
    const connection = await NativeConnection.connect({ address: server.address });
    const clientConnection = await Connection.connect({ address: server.address });
    const client = new Client({ connection: clientConnection, namespace: server.namespace });
    const version = { deploymentName: 'etims-refused', buildId: 'one' };
    const queues = ['refused-a', 'refused-b', 'refused-c', 'refused-d', 'refused-e'];
    const workers = await Promise.all(
      queues.map((taskQueue) =>
        Worker.create({
          connection,
          namespace: server.namespace,
          taskQueue,
          activities: { noop: async () => undefined },
          workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' },
        }),
      ),
    );
    const running = workers.map((w) => w.run());
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
          done();
        },
      }),
    );
    const gauge: number[] = [];
    const metrics = { set: (_name: string, value: number) => void gauge.push(value) } as unknown as MetricsRecorder;
    const since = Date.now();
    const polled: PolledQueue[] = queues.map((taskQueue, i) => ({ taskQueue, businesses: [`biz_${i}`], since }));
    const registration = watchQueueRegistration({
      client,
      namespace: server.namespace,
      version,
      polled: () => polled,
      logger,
      metrics,
      graceMs: 2_000,
      everyMs: 1_000,
    });
    try {
      const missing = await eventually(
        async () => {
          await registration.check();
          return registration.missing();
        },
        (m) => m.length > 0,
        { timeoutMs: 30_000, what: 'a refused queue seen' },
      );
      // The server held 3 of the 5: the other 2 are refused, whichever polled last.
      expect(missing).toHaveLength(2);
      const error = lines.find((l) => l.level === 50);
      expect(error?.msg).toMatch(/matching\.maxTaskQueuesInDeploymentVersion/);
      expect(error?.queues).toEqual(expect.arrayContaining(missing.map((q) => q.taskQueue)));
      expect(error?.businesses).toEqual(expect.arrayContaining(missing.flatMap((q) => q.businesses)));
      expect(gauge.at(-1)).toBe(2);
      const report = await readinessOf({ stopping: false, workers: { every: () => workers }, queues: registration });
      expect(report.ok).toBe(false);
      expect(report.checks.queues).toContain(missing[0]!.taskQueue);
      // Told once, not at every check.
      await registration.check();
      expect(lines.filter((l) => l.level === 50)).toHaveLength(1);
    } finally {
      registration.stop();
      for (const w of workers) w.shutdown();
      await Promise.all(running);
      await connection.close();
      await clientConnection.close();
      await server.stop();
    }
  }, 120_000);
});
