/**
 * Records the histories replay.test.ts replays: starts its own Temporal dev server, the sandbox, the callback
 * receiver and the real workers, runs the scenarios of test/workflows/history-scenarios.ts, and writes each
 * execution's history to test/histories/<version>/<name>.json (the version in package.json) in the proto JSON
 * form `historyFromJSON` reads.
 *
 *   npx tsx scripts/record-histories.ts
 *
 * Record once per released version whose workflows changed, into a new folder, and never overwrite an older
 * folder: its files stand for executions already running in production, which every future version of the
 * workflows must still replay.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { startDevServer } from '../src/temporal/dev-server.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../src/temporal/search-attributes.js';
import { workflowsPath } from '../src/worker.js';
import { runScenarios, scenarioFixture } from '../test/workflows/history-scenarios.js';
import { startSaleStack } from '../test/workflows/sale-stack.js';

const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const target = fileURLToPath(new URL(`../test/histories/${version}/`, import.meta.url));

/** Histories are committed: a secret in one would be published. */
const FORBIDDEN = [/cmp_sk_/, /\/callbacks\/[^"]*\/[A-Za-z0-9_-]{43}/];

const server = await startDevServer({ headless: true, searchAttributes: toCliSearchAttributes(projectSearchAttributes), logger: (m) => console.log(`[temporal] ${m}`) });
const connection = await Connection.connect({ address: server.address });
const nativeConnection = await NativeConnection.connect({ address: server.address });
try {
  const client = new Client({ connection, namespace: server.namespace });
  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath() });
  const stack = await startSaleStack({ client, nativeConnection, namespace: server.namespace }, bundle, { callbacks: true, fixture: scenarioFixture() });
  try {
    const runs = await runScenarios(stack);
    await mkdir(target, { recursive: true });
    for (const { name, handle } of runs) {
      const text = `${JSON.stringify(JSON.parse(historyToJSON(await handle.fetchHistory())), null, 2)}\n`;
      // Payloads are base64 in proto JSON: look at them decoded.
      const decoded = text.replace(/"data": "([A-Za-z0-9+/=]+)"/g, (_match, data: string) => Buffer.from(data, 'base64').toString('utf8'));
      const leak = FORBIDDEN.find((pattern) => pattern.test(decoded));
      if (leak) throw new Error(`the history of ${name} matches ${leak}: not written`);
      await writeFile(`${target}${name}.json`, text);
      console.log(`wrote test/histories/${version}/${name}.json (${handle.workflowId})`);
    }
  } finally {
    await stack.close();
  }
} finally {
  await nativeConnection.close();
  await connection.close();
  await server.stop();
}
