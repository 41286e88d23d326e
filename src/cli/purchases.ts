import { connectSalesClient } from '../client/connect.js';
import { syncPurchasesNow } from '../client/purchases.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { createProgram } from './command.js';
import { EXIT, connectAndRun, runClientProgram } from './client-command.js';
import { BAD_INPUT_EXIT, JSON_OUTPUT, TEMPORAL_ENVIRONMENT, helpSections } from './help.js';

interface PurchasesOptions {
  wait?: boolean;
  taskQueue?: string;
}

const program = createProgram(
  'npm run purchases --',
  "Runs a business's supplier-invoice sync now (after the one running, if any), through its schedule.",
)
  .option('--wait', 'wait for the sync to end and print its counts')
  .option('--task-queue <name>', `task queue of the workers whose schedule it is (default ${WORKFLOW_TASK_QUEUE})`)
  .addHelpText(
    'after',
    helpSections({
      environment: TEMPORAL_ENVIRONMENT,
      output: JSON_OUTPUT,
      exitCodes: [
        [EXIT.done, 'done: the sync was requested (with --wait: it finished)'],
        [
          EXIT.failed,
          'no schedule for the business, --wait ended before the sync did, or Temporal could not be reached',
        ],
        BAD_INPUT_EXIT,
      ],
    }),
  );

program
  .command('sync')
  .description("run the business's purchases sync now and print what was requested (with --wait, the sync's counts)")
  .argument('<businessId>')
  .act<PurchasesOptions>(async ([businessId], { wait, taskQueue }, command) => {
    if (businessId!.trim() === '') return command.error('error: businessId must not be empty');
    return connectAndRun(
      (settings) => connectSalesClient({ settings }),
      async ({ client }) => {
        const outcome = await syncPurchasesNow(client, businessId!, {
          wait: wait === true,
          ...(taskQueue ? { taskQueue } : {}),
        });
        // The ledger is the sync's memory, not news: print the counts.
        const { result, ...request } = outcome;
        return { output: result ? { ...request, counts: result.counts } : { ...request, requested: true } };
      },
    );
  });

runClientProgram(program);
