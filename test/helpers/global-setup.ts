import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../tools/temporal-cli/dev-server.js';
import { ensureSearchAttributes } from '../../src/temporal/ensure-search-attributes.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    /** The real workflows bundled once for the run (test/helpers/workflow-bundle.ts reads it). */
    workflowBundlePath: string;
  }
}

const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const bundler = fileURLToPath(new URL('./bundle-workflows.ts', import.meta.url));

/** Bundles the workflows in a child process, so this one never loads the SDK's native bridge. */
async function bundleWorkflows(): Promise<{ file: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'etims-workflows-'));
  const file = path.join(dir, 'bundle.json');
  await promisify(execFile)(tsx, [bundler, file], { maxBuffer: 16 * 1024 * 1024 });
  return { file, remove: () => rm(dir, { recursive: true, force: true }) };
}

// One server for the whole run: starting it costs seconds, and test files isolate themselves by task queue.
// We spawn the CLI ourselves (not TestWorkflowEnvironment.createLocal) so this process never loads the
// SDK's native bridge, and the address is a plain string we can hand to the forked test files.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const external = process.env.TEMPORAL_ADDRESS;
  // Alongside the server's start.
  const bundling = bundleWorkflows();

  if (external) {
    const connection = await Connection.connect({ address: external });
    try {
      await ensureSearchAttributes(connection, namespace, projectSearchAttributes);
    } finally {
      await connection.close();
    }
    console.log(`[temporal] using existing server ${external} (namespace ${namespace})`);
    project.provide('temporalAddress', external);
    project.provide('temporalNamespace', namespace);
    const bundle = await bundling;
    project.provide('workflowBundlePath', bundle.file);
    return bundle.remove;
  }

  const server = await startDevServer({
    headless: true,
    namespace,
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
    logger: (msg) => console.log(`[temporal] ${msg}`),
  });
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
  const bundle = await bundling.catch(async (err: unknown) => {
    await server.stop();
    throw err;
  });
  project.provide('workflowBundlePath', bundle.file);
  return async () => {
    await server.stop();
    await bundle.remove();
  };
}
