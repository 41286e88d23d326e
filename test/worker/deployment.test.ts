/**
 * The Worker Deployment Version a process runs as: read from the environment (or derived from the release and the
 * commit), shown at start-up and in the metrics; and a build that takes no new workflows says what to run, or makes
 * itself current when told to.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { NativeConnection, Worker } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { deploymentNameFor, derivedBuildId, loadVersioningSettings } from '../../src/config/versioning.js';
import { SalesClient } from '../../src/client/sales-client.js';
import { resolveServices } from '../../src/services/endpoints.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import type { VersionRouting } from '../../src/worker/deployment.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { freePort } from '../../tools/free-port.js';
import { eventually } from '../helpers/eventually.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';
import { saleInput } from '../workflows/sale-stack.js';
import { singleKeyTestTenants, testWorkerSettings } from '../helpers/worker-settings.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

interface Entry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const entries: Entry[] = [];
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) entries.push(JSON.parse(line) as Entry);
      done();
    },
  }),
);
const metricsPort = await freePort();
// Before the test environment: the runtime, and so its Prometheus endpoint, is made once per process.
installTemporalRuntime(logger, { metricsBindAddress: `127.0.0.1:${metricsPort}` });

afterAll(closeTestEnv);

describe('the version settings', () => {
  it('takes the deployment and the build from the variables the worker controller sets', () => {
    expect(
      loadVersioningSettings({
        TEMPORAL_DEPLOYMENT_NAME: 'etims-nairobi',
        TEMPORAL_WORKER_BUILD_ID: '2.0.0-rc1',
        WORKER_MAKE_CURRENT: 'true',
      }),
    ).toEqual({ deploymentName: 'etims-nairobi', buildId: '2.0.0-rc1', makeCurrent: true });
  });

  it('derives the build from the release and the commit, the image giving the commit (BUILD_COMMIT)', () => {
    expect(loadVersioningSettings({ BUILD_COMMIT: '1a2b3c4d5e6f' })).toEqual({
      deploymentName: undefined,
      buildId: `${version}+1a2b3c4d5e6f`,
      makeCurrent: 'first',
    });
    expect(loadVersioningSettings({ WORKER_MAKE_CURRENT: 'false' }).makeCurrent).toBe(false);
    // In a checkout, git answers.
    expect(loadVersioningSettings({}).buildId).toMatch(new RegExp(`^${version.replace(/\./g, '\\.')}\\+[0-9a-f]{12}$`));
  });

  it('refuses to run without a build id, and names what the server would refuse', () => {
    expect(() => derivedBuildId(undefined)).toThrow(ConfigError);
    expect(() => derivedBuildId(undefined)).toThrow(/BUILD_COMMIT.*TEMPORAL_WORKER_BUILD_ID/);
    expect(() => loadVersioningSettings({ TEMPORAL_DEPLOYMENT_NAME: 'etims.sales' })).toThrow(
      /TEMPORAL_DEPLOYMENT_NAME: "etims.sales" must not contain "\." or ":"/,
    );
    expect(() => loadVersioningSettings({ TEMPORAL_WORKER_BUILD_ID: '__internal' })).toThrow(ConfigError);
    expect(() => loadVersioningSettings({ WORKER_MAKE_CURRENT: 'yes' })).toThrow(/WORKER_MAKE_CURRENT/);
    expect(loadVersioningSettings({ WORKER_MAKE_CURRENT: 'always' })).toMatchObject({
      makeCurrent: true,
      rollBack: true,
    });
  });

  it('refuses a build id of its own form that names another commit than the image was built from', () => {
    expect(() =>
      loadVersioningSettings({ TEMPORAL_WORKER_BUILD_ID: '2.3.0+aaaaaaaaaaaa', BUILD_COMMIT: 'bbbbbbbbbbbb' }),
    ).toThrow(/names commit aaaaaaaaaaaa, but this image was built from bbbbbbbbbbbb/);
    expect(
      loadVersioningSettings({ TEMPORAL_WORKER_BUILD_ID: '2.3.0+bbbbbbbbbbbb', BUILD_COMMIT: 'bbbbbbbbbbbb' }).buildId,
    ).toBe('2.3.0+bbbbbbbbbbbb');
    // The worker controller's ids are its own.
    expect(
      loadVersioningSettings({ TEMPORAL_WORKER_BUILD_ID: 'etims-worker-5d8f7c9b4', BUILD_COMMIT: 'bbbbbbbbbbbb' })
        .buildId,
    ).toBe('etims-worker-5d8f7c9b4');
  });

  it('names a fleet deployment after its workflow queue, in what the server allows', () => {
    expect(deploymentNameFor('sales')).toBe('etims-sales');
    expect(deploymentNameFor('staging.sales:2')).toBe('etims-staging-sales-2');
  });
});

/** Neither service configured: the embedded sandbox stands in for both, as on a local stack. */
const embeddedServices = () =>
  resolveServices({ compliance: undefined, accounting: undefined, logLevel: 'silent' }, pino({ level: 'silent' }));

const since = () => {
  const from = entries.length;
  return () => entries.slice(from);
};

/** Starts a worker process of a build on `taskQueue`, as `npm run worker` would, and says how its version is routed. */
async function versionStarter(services: Awaited<ReturnType<typeof resolveServices>>, taskQueue: string) {
  const env = await getTestEnv();
  const bundle = await workflowBundle();
  return async (buildId: string, makeCurrent: boolean | 'first', rollBack = false) => {
    const settings = testWorkerSettings({ versioning: { buildId, makeCurrent, rollBack } });
    const worker = await WorkerProcess.start(settings, {
      brought: {
        connection: env.nativeConnection,
        client: env.client,
        tenants: singleKeyTestTenants(services, settings),
      },
      logger,
      taskQueue,
      workflowBundle: bundle,
    });
    const running = worker.run();
    const routing: VersionRouting = await worker.routing;
    return {
      routing,
      stop: async () => {
        worker.shutdown();
        await running;
        await worker.close();
      },
    };
  };
}

describe('a worker process starting as a version', () => {
  it('makes itself current as the first build of a deployment, by default; a later build waits for the operator', async () => {
    const env = await getTestEnv();
    const services = await embeddedServices();
    const taskQueue = uniqueTaskQueue('first-deploy');
    const start = await versionStarter(services, taskQueue);
    expect(loadVersioningSettings({}).makeCurrent).toBe('first');
    try {
      let logged = since();
      const first = await start('one', 'first');
      expect(first.routing).toBe('made-current');
      expect(logged().find((e) => e.msg.includes('made itself current'))?.msg).toMatch(/the first of its deployment/);
      // A sale started now is signed: nothing else to do on a fresh deployment.
      const answer = await new SalesClient(env.client, { taskQueue }).startAndAwaitReceipt(saleInput(), {
        wait: '20s',
      });
      expect(answer.signed).toBe(true);
      await first.stop();
      // A second build started beside it does not take over by itself.
      logged = since();
      const second = await start('two', 'first');
      expect(second.routing).toBe('inactive');
      expect(logged().find((e) => e.level === 40)).toMatchObject({ current: 'one' });
      await second.stop();
    } finally {
      await services.close();
    }
  }, 120_000);

  it('leaves a first build inactive while workers without versioning poll its queue', async () => {
    const env = await getTestEnv();
    const services = await embeddedServices();
    const taskQueue = uniqueTaskQueue('unversioned');
    const start = await versionStarter(services, taskQueue);
    // A fleet from before versioning, polling the same workflow queue.
    const connection = await NativeConnection.connect({ address: env.address });
    const unversioned = await Worker.create({
      connection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle: await workflowBundle(),
      identity: 'fleet-before-versioning',
    });
    const polling = unversioned.run();
    try {
      await eventually(
        async () =>
          (
            await env.client.workflowService.describeTaskQueue({
              namespace: env.namespace ?? 'default',
              taskQueue: { name: taskQueue },
              taskQueueType: 1,
            })
          ).pollers?.length ?? 0,
        (n) => n > 0,
        { timeoutMs: 20_000, what: 'the unversioned poller seen' },
      );
      const logged = since();
      const first = await start('one', 'first');
      expect(first.routing).toBe('inactive');
      const warning = logged().find((e) => e.level === 40);
      expect(warning?.msg).toMatch(/workers without versioning poll its queues/);
      expect(warning?.unversionedPollers).toContain('fleet-before-versioning');
      await first.stop();
    } finally {
      unversioned.shutdown();
      await polling;
      await connection.close();
      await services.close();
    }
  }, 120_000);

  it('says what to run when its build takes no new workflows, makes itself current when told to, and never takes it back', async () => {
    const services = await embeddedServices();
    const taskQueue = uniqueTaskQueue('deployment');
    const deploymentName = deploymentNameFor(taskQueue);
    const start = await versionStarter(services, taskQueue);
    try {
      // The first build of a deployment nobody has made current.
      let logged = since();
      const first = await start('first', false);
      expect(first.routing).toBe('inactive');
      expect(logged().find((e) => e.msg === 'workers ready')).toMatchObject({
        deployment: { deploymentName, buildId: 'first' },
      });
      const warning = logged().find((e) => e.level === 40 && /neither the current nor the ramping/.test(e.msg));
      const command = `temporal worker deployment set-current-version --deployment-name ${deploymentName} --build-id first`;
      expect(warning?.msg).toContain(command);
      expect(warning?.msg).toContain('set-ramping-version');
      expect(warning?.msg).toContain('WORKER_MAKE_CURRENT=true');
      expect(warning).toMatchObject({ current: 'none', makeCurrent: expect.stringContaining(command) });

      // Told to, the next build makes itself current; a process of the current build just says so (one process of a
      // build at a time here: the SDK refuses two on one connection).
      logged = since();
      const second = await start('second', true);
      expect(second.routing).toBe('made-current');
      expect(logged().some((e) => e.msg.includes('made itself current') && e.previous === 'none')).toBe(true);
      await second.stop();
      const again = await start('second', false);
      expect(again.routing).toBe('current');
      await again.stop();
      // A newer build takes over; a process of the one it replaced, restarting, does not take it back.
      const third = await start('third', true);
      expect(third.routing).toBe('made-current');
      await third.stop();
      logged = since();
      const restarted = await start('second', true);
      expect(restarted.routing).toBe('inactive');
      const kept = logged().find((e) => e.level === 40);
      expect(kept).toMatchObject({ current: 'third' });
      expect(kept?.msg).toContain('does not roll back');
      expect(kept?.msg).toContain(
        `temporal worker deployment set-current-version --deployment-name ${deploymentName} --build-id second`,
      );
      await restarted.stop();
      // A stack that runs one build at a time (npm start: WORKER_MAKE_CURRENT=always) takes it back.
      const checkedOutAgain = await start('second', true, true);
      expect(checkedOutAgain.routing).toBe('made-current');
      await checkedOutAgain.stop();
      // The first build was never current: a process of it says which one is.
      await first.stop();
      logged = since();
      const older = await start('first', false);
      expect(older.routing).toBe('inactive');
      expect(logged().find((e) => e.level === 40)).toMatchObject({ current: 'second' });

      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const info = metrics.split('\n').filter((line) => line.startsWith('etims_worker_build_info{'));
      for (const build of ['first', 'second'])
        expect(
          info.some((l) => l.includes(`deployment_name="${deploymentName}"`) && l.includes(`build_id="${build}"`)),
        ).toBe(true);
      await older.stop();
    } finally {
      await services.close();
    }
  }, 120_000);
});
