/**
 * `npm run purchases -- sync <businessId> [--wait]`: asks for a purchases sync of the business now, through its
 * schedule (which a worker with PURCHASES_SINK made). With --wait, prints the sync's counts when it ends.
 * Exit codes: 0 done, 1 the sync could not be requested or did not finish in time (or Temporal could not be
 * reached), 2 bad input.
 */
import { connectSalesClient } from '../client/connect.js';
import { syncPurchasesNow } from '../client/purchases.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { SALE_TASK_QUEUE } from '../contracts/task-queues.js';
import { UsageError, connectAndRun, parseCommandLine, runClientCommand, unknownCommand } from './client-command.js';

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
  const line = parseCommandLine(argv, { wait: { type: 'boolean' }, 'task-queue': { type: 'string' } }, usage());
  if (line === undefined) return 0;
  const { command, args, values } = line;
  const [businessId, ...rest] = args;
  if (command !== 'sync') throw unknownCommand(command, usage());
  if (businessId === undefined || businessId.trim() === '' || rest.length > 0) throw new UsageError(`sync takes one argument: <businessId>\n\n${usage()}`);

  const taskQueue = values['task-queue'];
  return connectAndRun(
    (settings) => connectSalesClient({ settings }),
    async ({ client }) => {
      const outcome = await syncPurchasesNow(client, businessId, { wait: values.wait === true, ...(taskQueue ? { taskQueue } : {}) });
      // The ledger is the sync's memory, not news: print the counts.
      const { result, ...request } = outcome;
      return { output: result ? { ...request, counts: result.counts } : { ...request, requested: true } };
    },
  );
}

runClientCommand(() => main(process.argv.slice(2)));
