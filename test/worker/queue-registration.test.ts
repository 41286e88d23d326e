/**
 * A task queue the server refuses to hold in a worker's deployment version is said at once: against a real dev server
 * whose versions may hold only 3 queues, versioned workers poll 5, and the check names the refused ones and their
 * businesses, sets the gauge (recorded by a stand-in recorder: the Prometheus side is deploy/prometheus's rule tests)
 * and turns readiness to 503 naming the first.
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { MetricsRecorder } from '../../src/metrics/recorder.js';
import {
  watchQueueRegistration,
  type PolledQueue,
  type QueueRegistration,
} from '../../src/worker/queue-registration.js';
import { readinessOf } from '../../src/worker/health.js';
import { startDevServer } from '../../tools/temporal-cli/dev-server.js';
import { eventually } from '../helpers/eventually.js';

/** A dev server of the test's own (its dynamic config added), with a worker connection and a client on it. */
async function ownServer(dynamicConfig: Record<string, number> = {}) {
  const server = await startDevServer({ headless: true, searchAttributes: [], dynamicConfig });
  const connection = await NativeConnection.connect({ address: server.address });
  const clientConnection = await Connection.connect({ address: server.address });
  const client = new Client({ connection: clientConnection, namespace: server.namespace });
  const close = async () => {
    await connection.close();
    await clientConnection.close();
    await server.stop();
  };
  return { server, connection, client, close };
}

/** Asks the server again until `read` finds something. */
function checkedUntilSome<T>(registration: QueueRegistration, read: () => readonly T[], what: string) {
  return eventually(
    async () => {
      await registration.check();
      return read();
    },
    (found) => found.length > 0,
    { timeoutMs: 60_000, what },
  );
}

describe('a task queue the deployment version does not hold', () => {
  it('is named with its businesses, counted, and makes the process unready', async () => {
    const { server, connection, client, close } = await ownServer({
      'matching.maxTaskQueuesInDeploymentVersion': 3,
    });
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
      const missing = await checkedUntilSome(registration, () => registration.missing(), 'a refused queue seen');
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
      await close();
    }
  }, 120_000);

  it('serves a window queue that still has calls waiting after this process stopped polling it', async () => {
    const { server, connection, client, close } = await ownServer();
    const fleet = 'stranded-fleet';
    const windowQueue = `${fleet}.compliance-api.app_group`;
    const version = { deploymentName: 'etims-stranded', buildId: 'one' };
    const versioning = { useWorkerVersioning: true as const, version, defaultVersioningBehavior: 'PINNED' as const };
    const workflows = await Worker.create({
      connection,
      namespace: server.namespace,
      taskQueue: fleet,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: new URL('./fixtures/window-call.ts', import.meta.url).pathname,
        logger: new DefaultLogger('WARN'),
      }),
      workerDeploymentOptions: versioning,
    });
    // The window's queue, polled once (so the version holds it), then no more: its window lost its own queue.
    const windowWorker = await Worker.create({
      connection,
      namespace: server.namespace,
      taskQueue: windowQueue,
      activities: { call: async () => 'answered' },
      workerDeploymentOptions: versioning,
    });
    const runningWorkflows = workflows.run();
    const runningWindow = windowWorker.run();
    const started: Array<[Worker, Promise<void>]> = [
      [workflows, runningWorkflows],
      [windowWorker, runningWindow],
    ];
    const found: string[][] = [];
    const registration = watchQueueRegistration({
      client,
      namespace: server.namespace,
      version,
      polled: () => [{ taskQueue: fleet, businesses: [], since: 0 }],
      logger: pino({ level: 'silent' }),
      windowQueuePrefix: `${fleet}.compliance-api.`,
      onStranded: (queues) => void found.push([...queues]),
      graceMs: 0,
      everyMs: 60_000,
    });
    try {
      await eventually(
        async () =>
          (
            await client.workflowService
              .describeWorkerDeploymentVersion({ namespace: server.namespace, deploymentVersion: version })
              .catch(() => undefined)
          )?.workerDeploymentVersionInfo?.taskQueueInfos?.map((q) => q.name) ?? [],
        (names) => names.includes(windowQueue) && names.includes(fleet),
        { timeoutMs: 30_000, what: 'both queues held by the version' },
      );
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: server.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
      });
      windowWorker.shutdown();
      await runningWindow;
      const call = await client.workflow.start('windowCall', {
        taskQueue: fleet,
        workflowId: `stranded-${Date.now()}`,
        args: [windowQueue],
      });
      const stranded = await checkedUntilSome(registration, () => registration.stranded(), 'the waiting call found');
      expect(stranded).toEqual([windowQueue]);
      expect(found.at(-1)).toEqual([windowQueue]);
      // Served again (as start.ts does on onStranded), the call is answered.
      const again = await Worker.create({
        connection,
        namespace: server.namespace,
        taskQueue: windowQueue,
        activities: { call: async () => 'answered' },
        workerDeploymentOptions: versioning,
      });
      started.push([again, again.run()]);
      expect(await call.result()).toBe('answered');
    } finally {
      registration.stop();
      for (const [worker] of started) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(started.map(([, running]) => running));
      await close();
    }
  }, 120_000);
});
