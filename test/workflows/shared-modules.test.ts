/**
 * Every workflow module, and what it imports, is evaluated once per workflow thread and shared by every workflow,
 * instead of once per new workflow: the bundle preloads the workflows' entry. What a shared module keeps for one run
 * (a counter's occurrences) must then live apart for each workflow.
 */
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker, type InjectedSinks } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import type { MetricsSinks } from '../../src/metrics/workflow-sink.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';

describe('modules shared between workflows', () => {
  it('are every module of the bundle: the workflows entry is loaded before any workflow', async () => {
    const { code } = await workflowBundle();
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
    expect(preload).toContain('workflows/index.ts');
  });

  it("keep each workflow's counts apart: two runs in one worker each count from the first occurrence", async () => {
    const env = await getTestEnv();
    const workflowsPath = fileURLToPath(new URL('./fixtures/counting-workflow.ts', import.meta.url));
    // As the product bundles: the module that counts is shared.
    const bundle = await bundleWorkflowCode({ workflowsPath, preloadModules: [workflowsPath], logger: testLogger });
    expect(workflowSources().preloadModules).toEqual([workflowSources().workflowsPath]);
    const occurrences: string[] = [];
    const sinks: InjectedSinks<MetricsSinks> = {
      metrics: {
        count: { fn: (_info, _name, _labels, _value, occurrence) => void occurrences.push(occurrence) },
        set: { fn: () => undefined },
      },
    };
    const taskQueue = uniqueTaskQueue('shared-modules');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle: bundle,
      sinks,
    });
    await worker.runUntil(async () => {
      for (const run of [1, 2])
        await env.client.workflow.execute('countingWorkflow', {
          taskQueue,
          workflowId: `${taskQueue}-${run}`,
          args: [2],
        });
    });
    expect(occurrences).toEqual([
      'etims_sales_signed{}#1',
      'etims_sales_signed{}#2',
      'etims_sales_signed{}#1',
      'etims_sales_signed{}#2',
    ]);
  });
});
