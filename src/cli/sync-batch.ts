import { SyncBatchClient, parseSyncBatchId, parseSyncBatchInput } from '../client/sync-batches.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { EXIT, clientProgram, connectAndRun, runClientProgram, type CommandResult } from './client-command.js';

interface SyncBatchOptions {
  wait?: boolean;
  company?: string;
  billPayments?: string;
  taskQueue?: string;
}

const connectAndRunBatch = (run: (client: SyncBatchClient) => Promise<CommandResult>, options: SyncBatchOptions) =>
  connectAndRun(({ client }) => run(new SyncBatchClient(client, options)));

const program = clientProgram(
  'npm run sync-batch --',
  'Accounting sync batches from a shell, through the typed client; results are printed as JSON.',
  {
    done: 'done (process --wait: the batch is synced)',
    failed: 'the operation failed or was refused, process --wait ended dismissed, or Temporal could not be reached',
  },
)
  .option('--wait', 'process: wait for the batch to finish and print its summary')
  .option('--company <id>', 'process: the company the batch belongs to (narrows every list call)')
  .option(
    '--bill-payments <ids>',
    'process: comma-separated ids, for a service that does not tag payments with their batch',
  )
  .option('--task-queue <name>', `task queue of the workflow worker (default ${WORKFLOW_TASK_QUEUE})`);

program
  .command('process')
  .description('process the batch and follow its bill payments (a second start finds the first)')
  .argument('<syncBatchId>')
  .act<SyncBatchOptions>(([syncBatchId], options) => {
    const input = parseSyncBatchInput({
      syncBatchId,
      companyId: options.company,
      billPaymentIds: options.billPayments?.split(',').map((id) => id.trim()),
    });
    return connectAndRunBatch(async (client) => {
      const started = await client.process(input);
      if (!options.wait) return { output: started };
      const summary = await client.result(input.syncBatchId);
      return { output: { ...started, summary }, code: summary.outcome === 'synced' ? EXIT.done : EXIT.failed };
    }, options);
  });

for (const [name, operation, description] of [
  ['state', 'getState', 'print the workflow state (step, failed payments, polls)'],
  ['reprocess', 'reprocess', 'process the failed bill payments of a parked batch again'],
] as const) {
  program
    .command(name)
    .description(description)
    .argument('<syncBatchId>')
    .act<SyncBatchOptions>(([syncBatchId], options) => {
      const id = parseSyncBatchId(syncBatchId);
      return connectAndRunBatch(async (client) => ({ output: await client[operation](id) }), options);
    });
}

program
  .command('dismiss')
  .description('close a parked batch, leaving its failed payments as they are')
  .argument('<syncBatchId>')
  .argument('<reason>')
  .act<SyncBatchOptions>(([syncBatchId, reason], options, command) => {
    const id = parseSyncBatchId(syncBatchId);
    if (reason!.trim() === '') return command.error('error: dismiss needs a reason');
    return connectAndRunBatch(async (client) => ({ output: await client.dismiss(id, reason!) }), options);
  });

runClientProgram(program);
