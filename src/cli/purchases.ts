/**
 * `npm run purchases -- sync <businessId> [--wait]`: asks for a purchases sync of the business now, through its
 * schedule (which a worker with PURCHASES_SINK made). With --wait, prints the sync's counts when it ends.
 * Exit codes: 0 done, 1 the sync could not be requested or did not finish in time (or Temporal could not be
 * reached), 2 bad input.
 */
import { parseArgs } from 'node:util';
import { connectSalesClient } from '../client/connect.js';
import { PurchasesSyncError, syncPurchasesNow } from '../client/purchases.js';
import { ConfigError } from '../config/env.js';
import { DEFAULT_TEMPORAL_ADDRESS, loadTemporalSettings } from '../temporal/connection.js';
import { SALE_TASK_QUEUE } from '../../workflows/definitions.js';

class UsageError extends Error {}

function usage(): string {
  return [
    'Usage: npm run purchases -- sync <businessId> [--wait] [--task-queue <name>]',
    '',
    'Runs the business\'s supplier-invoice sync now (after the one running, if any), through its schedule.',
    '',
    'Options:',
    '  --wait               wait for the sync to end and print its counts',
    `  --task-queue <name>  task queue of the workers whose schedule it is (default ${SALE_TASK_QUEUE})`,
    '  -h, --help           show this help',
    '',
    'Environment: as npm run sales (TEMPORAL_ADDRESS, default ' + DEFAULT_TEMPORAL_ADDRESS + ', TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,',
    'TEMPORAL_TLS*, TEMPORAL_PROFILE, PAYLOAD_KEYS / PAYLOAD_ENCRYPTION=off).',
    '',
    'Exit codes: 0 done, 1 not scheduled / not finished in time / Temporal unreachable, 2 bad input.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { wait: { type: 'boolean' }, 'task-queue': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\n\n${usage()}`);
  }
  const [command, businessId, ...rest] = parsed.positionals;
  if (parsed.values.help || command === 'help') {
    console.log(usage());
    return 0;
  }
  if (command !== 'sync') throw new UsageError(`${command === undefined ? 'a command is required' : `unknown command "${command}"`}\n\n${usage()}`);
  if (businessId === undefined || businessId.trim() === '' || rest.length > 0) throw new UsageError(`sync takes one argument: <businessId>\n\n${usage()}`);

  const settings = loadTemporalSettings(process.env);
  const { client, close } = await connectSalesClient({ settings });
  try {
    const taskQueue = parsed.values['task-queue'];
    const outcome = await syncPurchasesNow(client, businessId, { wait: parsed.values.wait === true, ...(taskQueue ? { taskQueue } : {}) });
    // The ledger is the sync's memory, not news: print the counts.
    const { result, ...request } = outcome;
    console.log(JSON.stringify(result ? { ...request, counts: result.counts } : { ...request, requested: true }, null, 2));
    return 0;
  } finally {
    await close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}`);
      process.exit(2);
    }
    if (err instanceof PurchasesSyncError) {
      console.error(`error: ${err.message}`);
      process.exit(1);
    }
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
