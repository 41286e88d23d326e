/**
 * `npx tsx src/cli/sync-batch.ts <command> …`: accounting sync batches from a shell, through the typed client.
 * Input is validated before Temporal is contacted; results are printed as JSON.
 * Exit codes: 0 done, 1 the operation failed (or Temporal could not be reached, or --wait ended dismissed),
 * 2 bad input.
 */
import { connectSyncBatchClient, parseSyncBatchInput, type SyncBatchClient } from '../client/sync-batches.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { SALE_TASK_QUEUE } from '../contracts/task-queues.js';
import { UsageError, connectAndRun, parseCommandLine, runClientCommand, unknownCommand, type CommandResult } from './client-command.js';

const USAGE = [
  'Usage: npx tsx src/cli/sync-batch.ts <command> <syncBatchId> [options]',
  '',
  'Commands:',
  '  process <syncBatchId>            process the batch and follow its bill payments (a second start finds the first)',
  '  state <syncBatchId>              print the workflow state (step, failed payments, polls, API calls)',
  '  reprocess <syncBatchId>          process the failed bill payments of a parked batch again',
  '  dismiss <syncBatchId> <reason>   close a parked batch, leaving its failed payments as they are',
  '',
  'Options:',
  '  --wait                  process: wait for the batch to finish and print its summary',
  '  --company <id>          process: the company the batch belongs to (narrows every list call)',
  '  --bill-payments <ids>   process: comma-separated ids, for a service that does not tag payments with their batch',
  `  --task-queue <name>     task queue of the workflow worker (default ${SALE_TASK_QUEUE})`,
  '  -h, --help              show this help',
  '',
  `Environment: TEMPORAL_ADDRESS (default ${DEFAULT_TEMPORAL_ADDRESS}), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,`,
  'TEMPORAL_PROFILE, PAYLOAD_KEYS / PAYLOAD_KEYS_FILE (or PAYLOAD_ENCRYPTION=off), as for npm run sales.',
].join('\n');

type Run = (client: SyncBatchClient) => Promise<CommandResult>;

function prepare(command: string | undefined, args: string[], values: { wait?: boolean; company?: string; 'bill-payments'?: string }): Run {
  const [syncBatchId, ...rest] = args;
  const expect = (count: number) => {
    if (args.length !== count) throw new UsageError(`${command} takes ${count} argument(s)\n\n${USAGE}`);
  };
  switch (command) {
    case 'process': {
      expect(1);
      const billPaymentIds = values['bill-payments']?.split(',').map((id) => id.trim());
      const input = parseSyncBatchInput({
        syncBatchId,
        ...(values.company === undefined ? {} : { companyId: values.company }),
        ...(billPaymentIds === undefined ? {} : { billPaymentIds }),
      });
      return async (client) => {
        const started = await client.process(input);
        if (!values.wait) return { output: started, code: 0 };
        const summary = await client.result(input.syncBatchId);
        return { output: { ...started, summary }, code: summary.outcome === 'synced' ? 0 : 1 };
      };
    }
    case 'state':
      expect(1);
      return async (client) => ({ output: await client.getState(syncBatchId!), code: 0 });
    case 'reprocess':
      expect(1);
      return async (client) => ({ output: await client.reprocess(syncBatchId!), code: 0 });
    case 'dismiss':
      expect(2);
      if (rest[0]!.trim() === '') throw new UsageError('dismiss needs a reason');
      return async (client) => ({ output: await client.dismiss(syncBatchId!, rest[0]!), code: 0 });
    default:
      throw unknownCommand(command, USAGE);
  }
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(
    argv,
    { wait: { type: 'boolean' }, company: { type: 'string' }, 'bill-payments': { type: 'string' }, 'task-queue': { type: 'string' } },
    USAGE,
  );
  if (line === undefined) return 0;
  const run = prepare(line.command, line.args, line.values);
  const taskQueue = line.values['task-queue'];
  // A refused or failed operation (SyncBatchOperationError, a failed workflow, Temporal unreachable) exits 1.
  return connectAndRun((settings) => connectSyncBatchClient({ settings, taskQueue }), ({ syncBatches }) => run(syncBatches));
}

runClientCommand(() => main(process.argv.slice(2)));
