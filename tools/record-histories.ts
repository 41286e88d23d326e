/**
 * Records the histories replay.test.ts replays: starts its own Temporal dev server, the sandbox, the callback
 * receiver and the real workers, runs the scenarios of test/workflows/history-scenarios.ts (sales),
 * history-scenarios-system.ts (sync batches, a reconciliation, purchases syncs) and history-scenarios-tenants.ts
 * (sales of a worker serving a tenants file: each path of the placement), and writes each execution's
 * history to test/histories/<version>/<name>.json (the version in package.json) in the proto JSON form
 * `historyFromJSON` reads. An execution that continued as new is a chain of runs, each its own history: every
 * run is written, as <name>-run-<n>.json, since a deploy can find any of them running.
 *
 *   npx tsx tools/record-histories.ts
 *   npx tsx tools/record-histories.ts --only tenants
 *   npx tsx tools/record-histories.ts --only outages
 *   npx tsx tools/record-histories.ts --only catalogue
 *
 * `--only tenants` records the tenants scenarios alone and writes only their files, beside those already in the
 * version's folder: how scenarios added after a version's histories were recorded join them without rewriting them.
 * `--only outages` records the outage scenarios alone (two sales and the watch): a version that changed only the
 * outage watch records just what it changed; `--only catalogue` likewise the catalogue import's.
 *
 * A race the real stack does not produce at will is recorded from the time-skipping test that stages it instead: the
 * sale the watch sent while its probe was under way (test/workflows/outage-logic.test.ts) writes its history where
 * RECORD_HISTORY_TO says.
 *
 *   RECORD_HISTORY_TO=test/histories/<version>/sale-sent-while-calling.json \
 *     npx vitest run test/workflows/outage-logic.test.ts -t 'goes again at once'
 *
 * Record each version into its own folder, from its final workflows. Every workflow runs pinned to the Worker
 * Deployment Version it started on, so an older version's executions are replayed by that version's workers: the
 * replay test holds the current version's folder alone.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { Option } from 'commander';
import { startDevServer } from './temporal-cli/dev-server.js';
import { createProgram, parseAndRun } from '../src/cli/command.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../src/contracts/search-attributes.js';
import { workflowSources } from '../src/temporal/workflow-bundle.js';
import {
  outageScenarios,
  runScenarios,
  scenarioFixture,
  type RecordedRun,
} from '../test/workflows/history-scenarios.js';
import {
  runPurchasesScenarios,
  runCatalogueScenarios,
  runFiscalDayScenarios,
  runReconciliationScenarios,
  runSyncBatchScenarios,
} from '../test/workflows/history-scenarios-system.js';
import { runTenantsScenarios } from '../test/workflows/history-scenarios-tenants.js';
import { startSaleStack } from '../test/workflows/sale-stack.js';

const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const target = fileURLToPath(new URL(`../test/histories/${version}/`, import.meta.url));

/** Histories are committed: a secret in one would be published. */
const FORBIDDEN = [/cmp_sk_/, /\/callbacks\/[^"]*\/[A-Za-z0-9_-]{43}/, /sk_development_/, /\bcs_/, /whsec_/];

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** Every run of the execution, from its first: a run that continued as new names the run it started. */
async function runsOf(client: Client, handle: WorkflowHandle): Promise<History[]> {
  const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId;
  if (!firstRunId) throw new Error(`${handle.workflowId}: no first run id`);
  const histories: History[] = [];
  for (let runId: string | null | undefined = firstRunId; runId;) {
    const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    histories.push(history);
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return histories;
}

/** The scenario groups `--only` can name: each records its own files, so one can be added to a version's folder. */
const GROUPS = ['tenants', 'outages', 'catalogue'] as const;
type Group = (typeof GROUPS)[number];

type Temporal = Parameters<typeof runTenantsScenarios>[0];

/** Every scenario of the single-key worker: sales, sync batches, a reconciliation, purchases syncs. */
async function runSingleKeyScenarios(temporal: Temporal, bundle: WorkflowBundle): Promise<RecordedRun[]> {
  const runs: RecordedRun[] = [];
  const stack = await startSaleStack(temporal, bundle, { callbacks: true, fixture: scenarioFixture() });
  try {
    runs.push(
      ...(await runScenarios(stack)),
      ...(await runFiscalDayScenarios(stack)),
      ...(await runSyncBatchScenarios(stack)),
      ...(await runReconciliationScenarios(stack)),
      ...(await runCatalogueScenarios(stack)),
    );
  } finally {
    await stack.close();
  }
  runs.push(...(await runPurchasesScenarios(temporal, bundle)));
  return runs;
}

/**
 * One group's scenarios alone, on a sale stack of their own: the outages' (a sale of each side and the watch they
 * waited on), or the catalogue import's (the import and its chunk).
 */
async function runGroupAlone(
  temporal: Temporal,
  bundle: WorkflowBundle,
  scenarios: (stack: Awaited<ReturnType<typeof startSaleStack>>) => Promise<RecordedRun[]>,
): Promise<RecordedRun[]> {
  const stack = await startSaleStack(temporal, bundle, { callbacks: true, fixture: scenarioFixture() });
  try {
    return await scenarios(stack);
  } finally {
    await stack.close();
  }
}

async function main(only: Group | undefined): Promise<number> {
  const server = await startDevServer({
    headless: true,
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
    logger: (m) => console.log(`[temporal] ${m}`),
  });
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  try {
    const client = new Client({ connection, namespace: server.namespace });
    const bundle = await bundleWorkflowCode({ ...workflowSources() });
    const temporal = { client, nativeConnection, namespace: server.namespace };
    const runs: RecordedRun[] = [];
    if (only === undefined) runs.push(...(await runSingleKeyScenarios(temporal, bundle)));
    if (only === 'outages') runs.push(...(await runGroupAlone(temporal, bundle, outageScenarios)));
    else if (only === 'catalogue') runs.push(...(await runGroupAlone(temporal, bundle, runCatalogueScenarios)));
    else runs.push(...(await runTenantsScenarios(temporal, bundle)));
    await mkdir(target, { recursive: true });
    for (const { name, handle } of runs) {
      const histories = await runsOf(client, handle);
      for (const [index, history] of histories.entries()) {
        const file = histories.length === 1 ? `${name}.json` : `${name}-run-${index + 1}.json`;
        const text = `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`;
        // Payloads are base64 in proto JSON: look at them decoded.
        const decoded = text.replace(/"data": "([A-Za-z0-9+/=]+)"/g, (_match, data: string) =>
          Buffer.from(data, 'base64').toString('utf8'),
        );
        const leak = FORBIDDEN.find((pattern) => pattern.test(decoded));
        if (leak) throw new Error(`the history of ${file} matches ${leak}: not written`);
        await writeFile(`${target}${file}`, text);
        console.log(`wrote test/histories/${version}/${file} (${handle.workflowId})`);
      }
    }
  } finally {
    await nativeConnection.close();
    await connection.close();
    await server.stop();
  }
  return 0;
}

const program = createProgram(
  'npx tsx tools/record-histories.ts',
  `Records the histories replay.test.ts replays into test/histories/${version}/ (the version in package.json), on a Temporal dev server, the sandbox and the real workers it starts. Never overwrite an older version's folder.`,
)
  .addOption(
    new Option(
      '--only <group>',
      'record only this group of scenarios, writing only its files beside those already in the folder',
    ).choices(GROUPS),
  )
  .act<{ only?: Group }>((_args, options) => main(options.only));

process.exitCode = await parseAndRun(program);
