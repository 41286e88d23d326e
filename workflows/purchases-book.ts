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
  PURCHASES_BOOK_CARRY_SCHEMA,
  getBookQuery,
  readBookUpdate,
  writeBookUpdate,
  type BookedPurchase,
  type PurchasesBookInput,
} from '../src/contracts/purchases-book.js';

/** Past this many events a run hands over to the next: an update is about 5, and a run takes at most 2,000. */
const HISTORY_EVENTS_PER_RUN = 2_000;
const DAY_MS = 86_400_000;

/**
 * The supplier invoices of one business dated one day (one shard of them): a small keyed store the purchases sync and
 * the stock-in read and write through updates, so that neither carries a business's whole history
 * (docs/purchases-sync.md, "The books"). It ends once its date leaves the horizon.
 */
export async function purchasesBookWorkflow(input: PurchasesBookInput): Promise<void> {
  const records = new Map<string, BookedPurchase>(Object.entries(input.carried?.records ?? {}));
  const refuse = (message: string) => {
    throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
  };
  setHandler(
    readBookUpdate,
    ({ ids, stock }) => {
      const found: Record<string, BookedPurchase> = {};
      for (const id of ids) {
        const held = records.get(id);
        if (!held) continue;
        const { stock: record, ...rest } = held;
        found[id] = stock && record ? { ...rest, stock: record } : rest;
      }
      return found;
    },
    {
      validator: (args) => {
        const ids: unknown = (args as { ids?: unknown } | undefined)?.ids;
        if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
          refuse('read takes {"ids": ["pur_…"], "stock": false}');
      },
    },
  );
  setHandler(
    writeBookUpdate,
    ({ records: writes }) => {
      for (const { id, entry, told, stock } of writes) {
        const held = { ...records.get(id) };
        if (entry !== undefined) held.entry = entry;
        if (told !== undefined) held.told = told;
        if (stock === null) delete held.stock;
        else if (stock !== undefined) held.stock = stock;
        records.set(id, held);
      }
      return { records: records.size };
    },
    {
      validator: (args) => {
        const writes: unknown = (args as { records?: unknown } | undefined)?.records;
        if (!Array.isArray(writes) || writes.some((r) => typeof r?.id !== 'string' || r.id === ''))
          refuse('write takes {"records": [{"id": "pur_…", "entry": ["<fingerprint>", 0, "<status>"]}]}');
      },
    },
  );
  setHandler(getBookQuery, () => ({
    date: input.date,
    records: records.size,
    stocked: [...records.values()].filter((r) => r.stock !== undefined).length,
  }));

  const endsAt = Date.parse(`${input.date}T00:00:00Z`) + (input.horizonDays + 1) * DAY_MS;
  const movedOn = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  const handOver = () =>
    movedOn() || workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_EVENTS_PER_RUN;
  // Woken only by the updates that touch it (the sync's daily sweep touches every book in the horizon, so a book
  // follows a new build within a day) and once, at the end of its horizon.
  const waitMs = endsAt - Date.now();
  if (waitMs > 0) await condition(handOver, waitMs);
  await condition(allHandlersFinished);
  if (Date.now() >= endsAt) return;
  await makeContinueAsNewFunc<typeof purchasesBookWorkflow>(
    movedOn() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {},
  )({
    businessId: input.businessId,
    date: input.date,
    horizonDays: input.horizonDays,
    carried: { schema: PURCHASES_BOOK_CARRY_SCHEMA, records: Object.fromEntries(records) },
  });
}
