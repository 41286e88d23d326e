import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  STOCK_IN_MAPPINGS_CARRY_SCHEMA,
  changeMappingsUpdate,
  findMappingsUpdate,
  listMappingsQuery,
  type StockInMappingsInput,
} from '../src/contracts/stock-in-mappings.js';
import { MappingTable } from './stock-in/matching.js';

/** Past this many events a run hands over to the next: an update is about 5, and a run takes at most 2,000. */
const HISTORY_EVENTS_PER_RUN = 2_000;

/**
 * One bucket of a business's mappings (the suppliers whose PIN falls in it): the stock-in reads the keys its lines need
 * and writes what doors and operators change (docs/stock-in.md, "Where the mappings live").
 */
export async function stockInMappingsWorkflow(input: StockInMappingsInput): Promise<void> {
  const table = new MappingTable(input.carried?.mappings);
  const refuse = (message: string) => {
    throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
  };
  setHandler(findMappingsUpdate, ({ keys }) => keys.flatMap((key) => table.get(key) ?? []), {
    validator: (args) => {
      const keys: unknown = (args as { keys?: unknown } | undefined)?.keys;
      if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) refuse('find takes {"keys": ["…"]}');
    },
  });
  setHandler(
    changeMappingsUpdate,
    ({ put = [], remove = [], removeMerchant = false }) => {
      if (removeMerchant) table.removeMerchant();
      const removed = remove.filter((key) => table.remove(key)).length;
      for (const m of put) table.put(m);
      table.takeChanges();
      return { mappings: table.size, removed };
    },
    {
      validator: (args) => {
        const change = args as { put?: unknown; remove?: unknown } | undefined;
        if (typeof change !== 'object' || change === null) refuse('change takes {"put": [...], "remove": ["…"]}');
        if (change?.put !== undefined && !Array.isArray(change.put)) refuse('put must be a list of mappings');
        if (change?.remove !== undefined && !Array.isArray(change.remove)) refuse('remove must be a list of keys');
      },
    },
  );
  setHandler(listMappingsQuery, () => table.list());

  const movedOn = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  // Woken only by the stock-in's reads and writes; after the stock-in moves to a new build it touches every bucket.
  await condition(
    () => movedOn() || workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_EVENTS_PER_RUN,
  );
  await condition(allHandlersFinished);
  await makeContinueAsNewFunc<typeof stockInMappingsWorkflow>(
    movedOn() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {},
  )({
    businessId: input.businessId,
    bucket: input.bucket,
    carried: { schema: STOCK_IN_MAPPINGS_CARRY_SCHEMA, mappings: table.list() },
  });
}
