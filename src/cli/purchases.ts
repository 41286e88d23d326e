import { syncPurchasesNow } from '../client/purchases.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { createProgram } from './command.js';
import { TEMPORAL_ENVIRONMENT, connectAndRun, runClientProgram } from './client-command.js';
import { addStockInCommand } from './stock-in-commands.js';
import { addMapCommands } from './stock-in-map.js';

const program = createProgram(
  'npm run purchases --',
  "A business's supplier invoices: run its purchases sync now (after the one running, if any), through its " +
    "schedule; and the stock that comes in from them (stock-in): each invoice's stock, and the merchant's mappings " +
    'of supplier lines to items (docs/stock-in-doors.md).',
  {
    environment: TEMPORAL_ENVIRONMENT,
    output:
      'sync: the result as JSON; stock-in and map: text tables (--json: the answer as JSON), map export: CSV; ' +
      'errors on standard error, naming what failed (never a secret)',
    done: 'done: the sync was requested (with --wait: it finished); stock-in --watch: nothing waits any more',
    failed:
      'no schedule for the business, --wait ended before the sync did, no stock-in for the business (nothing ' +
      'confirmed yet, or stock-in off), the stock-in refused the change, map remove found no such mapping, or ' +
      'Temporal could not be reached',
  },
)
  .option('--wait', 'sync: wait for the sync to end and print its counts')
  .option('--task-queue <name>', `task queue of the business's workers (default ${WORKFLOW_TASK_QUEUE})`);

program
  .command('sync')
  .description("run the business's purchases sync now and print what was requested (with --wait, the sync's counts)")
  .argument('<businessId>')
  .act<{ wait?: boolean; taskQueue?: string }>(async ([businessId], { wait, taskQueue }, command) => {
    if (businessId!.trim() === '') return command.error('error: businessId must not be empty');
    return connectAndRun(async ({ client }) => {
      const { result, ...request } = await syncPurchasesNow(client, businessId!, { wait: wait === true, taskQueue });
      // The ledger is the sync's memory, not news: print the counts.
      return { output: result ? { ...request, counts: result.counts } : { ...request, requested: true } };
    });
  });

addStockInCommand(program);
addMapCommands(program);

runClientProgram(program);
