import { Connection } from '@temporalio/client';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../tools/temporal-cli/dev-server.js';
import { ensureSearchAttributes } from '../../src/temporal/ensure-search-attributes.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
  }
}

// One server for the whole run: starting it costs seconds, and test files isolate themselves by task queue.
// We spawn the CLI ourselves (not TestWorkflowEnvironment.createLocal) so this process never loads the
// SDK's native bridge, and the address is a plain string we can hand to the forked test files.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const external = process.env.TEMPORAL_ADDRESS;

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
    return async () => {};
  }

  const server = await startDevServer({
    headless: true,
    namespace,
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
    logger: (msg) => console.log(`[temporal] ${msg}`),
  });
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
  return () => server.stop();
}
