import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer } from '../../tools/temporal-cli/dev-server.js';
import { BusinessId, FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import type { echo, EchoActivities } from '../fixtures/workflows/echo.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url));

const activities: EchoActivities = {
  async shout(message) {
    return message.toUpperCase();
  },
};

describe('Temporal dev server harness', () => {
  let workflowBundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: testLogger });
  });

  afterAll(closeTestEnv);

  it('runs a workflow on a real worker and records typed search attributes', async () => {
    const env = await getTestEnv();
    const taskQueue = uniqueTaskQueue('echo');
    const businessId = `biz-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle,
      activities,
    });

    const handle = await worker.runUntil(async () => {
      const started = await env.client.workflow.start<typeof echo>('echo', {
        taskQueue,
        workflowId: `echo-${randomUUID()}`,
        args: [businessId, 'hello'],
      });
      expect(await started.result()).toBe('HELLO from echo');
      return started;
    });

    const { typedSearchAttributes } = await handle.describe();
    expect(typedSearchAttributes.get(BusinessId)).toBe(businessId);
    expect(typedSearchAttributes.get(FiscalStatus)).toBe('ECHOED');
    expect(typedSearchAttributes.get(NeedsAttention)).toBe(false);
  });
});

describe('startDevServer failures', () => {
  it('reports the output of a server that exits during start-up', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dev-server-'));
    try {
      const crashing = path.join(dir, 'temporal');
      await writeFile(crashing, '#!/bin/sh\necho "boom: cannot open database" >&2\nexit 3\n');
      await chmod(crashing, 0o755);

      await expect(startDevServer({ executable: crashing, headless: true, searchAttributes: [] })).rejects.toThrow(
        /exited early[\s\S]*boom: cannot open database/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a port another process already holds', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const address = holder.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;

      await expect(startDevServer({ port, headless: true, searchAttributes: [] })).rejects.toThrow(/cannot listen on/);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('serves its own Prometheus metrics on the port it says, when asked for one', async () => {
    const server = await startDevServer({ headless: true, searchAttributes: [], metricsPort: 0 });
    try {
      expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const text = await (await fetch(server.metricsUrl!)).text();
      expect(text).toMatch(/^# TYPE \w+/m);
    } finally {
      await server.stop();
    }
  });
});
