import { readFile } from 'node:fs/promises';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { inject } from 'vitest';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { testLogger } from './temporal.js';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/**
 * The real workflows (workflows/index.ts), bundled once for the whole run by the global setup: bundling costs each
 * file seconds of CPU, which two files at a time on two cores pay in wall time. Bundled here when the run has none.
 */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  const path = inject('workflowBundlePath');
  bundle ??= path
    ? readFile(path, 'utf8').then((text) => JSON.parse(text) as WorkflowBundleWithSourceMap)
    : bundleWorkflowCode({ ...workflowSources(), logger: testLogger });
  return bundle;
}
