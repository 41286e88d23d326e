/**
 * What a worker process writes at info while it starts: the SDK's bundler used to log
 * webpack's statistics (some twenty lines in a terminal) at info. An operator needs one line for the bundle and one
 * saying the workers are ready, on which queues and against which services; webpack's output stays at debug.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { resolveServices } from '../../src/services/endpoints.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { bundleWorkflows } from '../../src/temporal/workflow-bundle.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';
import { singleKeyTestTenants, testWorkerSettings } from '../helpers/worker-settings.js';

interface Entry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const entries: Entry[] = [];
const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) entries.push(JSON.parse(line) as Entry);
      done();
    },
  }),
);
// Before the test environment, so the SDK's own logs (the bundler's among them) come through this logger.
installTemporalRuntime(logger);

afterAll(closeTestEnv);

describe('bundling the workflows', () => {
  it(
    "logs one line at info, with its size and time, and webpack's statistics at debug",
    { timeout: 60_000 },
    async () => {
      entries.length = 0;
      await bundleWorkflows(logger);
      const atInfo = entries.filter((e) => e.level >= 30);
      expect(atInfo).toEqual([expect.objectContaining({ msg: 'workflow bundle built', sizeMB: expect.any(Number) })]);
      expect(entries.some((e) => e.level === 20 && /webpack .* compiled/.test(e.msg))).toBe(true);
      entries.length = 0;
    },
  );
});

describe('a worker process starting', () => {
  it(
    "logs the workflow bundle in one line at info and webpack's statistics only at debug",
    { timeout: 120_000 },
    async () => {
      const env = await getTestEnv();
      const silent = pino({ level: 'silent' });
      const services = await resolveServices(
        { compliance: undefined, accounting: undefined, logLevel: 'silent' },
        silent,
      );
      const taskQueue = uniqueTaskQueue('startup-logging');
      const worker = await WorkerProcess.start(testWorkerSettings(), {
        brought: {
          connection: env.nativeConnection,
          client: env.client,
          tenants: singleKeyTestTenants(services, testWorkerSettings()),
        },
        logger,
        taskQueue,
      });
      const running = worker.run();
      try {
        const atInfo = entries.filter((e) => e.level >= 30);
        expect(atInfo.filter((e) => /webpack|modules by path/.test(e.msg))).toEqual([]);
        expect(atInfo.filter((e) => e.msg.includes('\n'))).toEqual([]);
        // Made now, or made from these same sources by an earlier start (under tsx) and loaded.
        const bundle = atInfo.filter((e) => /bundle/i.test(e.msg));
        expect(bundle).toHaveLength(1);
        if (bundle[0]!.msg === 'workflow bundle loaded (made from these sources before)')
          expect(bundle[0]!.codePath).toMatch(/node_modules\/\.cache\/workflow-bundles\/plain-[0-9a-f]{32}\.js$/);
        else {
          expect(bundle[0]).toMatchObject({ sizeMB: expect.any(Number), seconds: expect.any(Number) });
          expect(entries.some((e) => e.level === 20 && /webpack .* compiled/.test(e.msg))).toBe(true);
        }
        const ready = atInfo.find((e) => e.msg === 'workers ready');
        expect(ready).toMatchObject({
          queues: [taskQueue, `${taskQueue}.compliance-api`, `${taskQueue}.accounting-api`],
          services: { compliance: services.compliance.baseUrl, accounting: services.accounting.baseUrl },
        });
      } finally {
        worker.shutdown();
        await running;
        await worker.close();
        await services.close();
      }
    },
  );
});
