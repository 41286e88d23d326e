/**
 * Bundles the real workflows (workflows/index.ts) into the JSON file named by its one argument: the global setup
 * runs it once per test run, in a process of its own (the bundler loads the SDK's native bridge, which the vitest
 * process never does), and every test file reads the file instead of bundling for itself.
 */
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { testLogger } from './temporal.js';

const [out] = process.argv.slice(2);
if (!out) throw new Error('usage: tsx test/helpers/bundle-workflows.ts <out.json>');
const { code, sourceMap } = await bundleWorkflowCode({ ...workflowSources(), logger: testLogger });
await writeFile(out, JSON.stringify({ code, sourceMap }));
