/**
 * Bundles the real workflows (workflows/index.ts) into the JSON file named by its one argument: the global setup
 * runs it once per test run, in a process of its own (the bundler loads the SDK's native bridge, which the vitest
 * process never does), and every test file reads the file instead of bundling for itself. Beside it, the bundles a
 * worker process under tsx takes (plain and encrypted histories) are made if these sources have none yet, so the
 * files that start worker processes side by side find them instead of each bundling at once.
 */
import { writeFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { pino } from 'pino';
import { failureConverterPath } from '../../src/codec/data-converter.js';
import { workflowBundleFor, workflowSources } from '../../src/temporal/workflow-bundle.js';
import { testLogger } from './temporal.js';

const [out] = process.argv.slice(2);
if (!out) throw new Error('usage: tsx test/helpers/bundle-workflows.ts <out.json>');
const silent = pino({ level: 'silent' });
const [{ code, sourceMap }] = await Promise.all([
  bundleWorkflowCode({ ...workflowSources(), logger: testLogger }),
  workflowBundleFor(silent),
  workflowBundleFor(silent, { failureConverterPath: failureConverterPath() }),
]);
await writeFile(out, JSON.stringify({ code, sourceMap }));
