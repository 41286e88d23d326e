import { syncPurchasesNow } from '../client/purchases.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { clientProgram, connectAndRun, runClientProgram } from './client-command.js';

const program = clientProgram(
  'npm run purchases --',
  "Runs a business's supplier-invoice sync now (after the one running, if any), through its schedule.",
  {
    done: 'done: the sync was requested (with --wait: it finished)',
    failed: 'no schedule for the business, --wait ended before the sync did, or Temporal could not be reached',
  },
)
  .option('--wait', 'wait for the sync to end and print its counts')
  .option('--task-queue <name>', `task queue of the workers whose schedule it is (default ${WORKFLOW_TASK_QUEUE})`);

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

runClientProgram(program);
