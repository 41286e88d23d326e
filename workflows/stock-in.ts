import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { PRIORITY } from '../src/contracts/priority.js';
import {
  STOCK_IN_CARRY_SCHEMA,
  STOCK_IN_NEEDS_MAPPING,
  correctLineUpdate,
  getStockInStateQuery,
  mapLineUpdate,
  purchasesSeenSignal,
  putMappingsUpdate,
  removeMappingUpdate,
  stockInSchemas,
  type Mapping,
  type PurchasesSeen,
  type StockInInput,
  type SupplierLine,
} from '../src/contracts/stock-in.js';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from './activity-options.js';
import { count, setGauge } from './metrics.js';
import { placeOnBudget, type CallRoute } from './placement.js';
import { StockInBook, type Handover } from './stock-in/book.js';
import { lineKeys, type NameAnswers } from './stock-in/matching.js';
import { DEFAULT_PURCHASES_HORIZON_DAYS } from '../src/contracts/purchases-book.js';
import { STOCK_PACE, getBacklogQuery } from '../src/contracts/stock-ledger.js';
import { attentionList } from './attention.js';
import { required } from './update-arguments.js';

/** Past this many events a run hands over to the next (continue-as-new): replays stay short. */
const HISTORY_EVENTS_PER_RUN = 4_000;
/**
 * A settled invoice stays here an hour (its corrections answered at once), then goes to its purchases book, in batches
 * of 25 or at a hand-over to the next run: what the stock-in holds is the last hour's invoices and those waiting for a
 * person, however long the business has existed.
 */
const SETTLED_KEPT = { minutes: 60, batch: 25 };
/** Invoices of 500–1,200 bytes: a write of at most 100 stays near 120 KB. */
const PUT_AWAY_PER_WRITE = 100;
/** An idle stock-in looks this often whether another build is current (the flag comes only with a workflow task). */
const VERSION_CHECK_MS = 60 * 60_000;

// Local: one history event a hand-over; the ledger takes a line once, so an attempt again is harmless.
const ledger = proxyLocalActivities<Pick<Activities, 'handOverStock'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * The stock that comes in for one business: confirmed supplier invoices, told by the purchases sync, become `ADD`
 * lines for the ledger of each invoice's branch; the merchant's mappings live here (docs/stock-in.md).
 */
export async function stockInWorkflow(input: StockInInput): Promise<void> {
  const { businessId } = input;
  const { workflowId } = workflowInfo();
  const kept = input.settledKept ?? SETTLED_KEPT;
  const pace = { ...STOCK_PACE, ...input.pace };
  const book = new StockInBook(businessId, workflowId, input.carried);
  const inbox: PurchasesSeen[] = [];
  const outbox: Handover[] = [];
  let handedOver = 0;
  let queued = 0;
  let route: CallRoute | undefined;
  const books = { businessId, horizonDays: DEFAULT_PURCHASES_HORIZON_DAYS };
  const refresh = attentionBoard(book);

  // Cut to the pace's size, in order: a ledger is handed no more at once than it may run ahead by.
  const queue = (handovers: Handover[]): number => {
    for (const h of handovers)
      for (let start = 0; start === 0 || start < h.lines.length; start += pace.handOverLines) {
        outbox.push({ ...h, lines: h.lines.slice(start, start + pace.handOverLines) });
        queued++;
      }
    return queued;
  };
  const handedOverUpTo = (ticket: number) => condition(() => handedOver >= ticket);
  const now = (agoMs = 0) => new Date(Date.now() - agoMs).toISOString();

  async function askItemNames(question: { descriptions?: string[]; itemIds?: string[]; fresh?: boolean }) {
    route ??= await placeOnBudget(businessId, false);
    return proxyActivities<ActivitiesOn<'compliance'>>({
      taskQueue: route.complianceQueue,
      startToCloseTimeout: '60 seconds',
      heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
      // An outage or a full budget is waited out: the lines wait with it, nothing is lost.
      retry: API_RETRY,
      priority: { priorityKey: PRIORITY.bookkeeping, fairnessKey: route.fairnessKey },
    }).matchItemNames({ businessId, ...question });
  }

  /** What the item names say of the lines no mapping matches; none asked when every line is mapped. */
  async function itemNames(descriptions: string[]): Promise<NameAnswers | undefined> {
    if (descriptions.length === 0) return undefined;
    return (await askItemNames({ descriptions })).names;
  }

  /** A mapping to an item the business does not track would have the ledger's movements refused: said at once. */
  async function requireItems(itemIds: readonly string[]): Promise<void> {
    if (itemIds.length === 0) return;
    // An item created since the last read is found by reading again.
    let unknown = (await askItemNames({ itemIds: [...itemIds] })).unknownItemIds;
    if (unknown.length > 0) unknown = (await askItemNames({ itemIds: unknown, fresh: true })).unknownItemIds;
    if (unknown.length > 0)
      throw ApplicationFailure.nonRetryable(
        `${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''} ` +
          `${unknown.length === 1 ? 'is' : 'are'} not a stock-tracked item of business ${businessId}`,
        FAILURE_TYPES.invalidOperation,
      );
  }

  // Heartbeating: a read or write lost with its worker is made again in seconds, not after the minute, while every
  // line behind it waits.
  const booksApi = proxyActivities<ActivitiesOn<'workflow'>>({
    startToCloseTimeout: '60 seconds',
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
    retry: API_RETRY,
  });
  const pacing = proxyActivities<ActivitiesOn<'workflow'>>({
    startToCloseTimeout: '6 minutes',
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
    retry: API_RETRY,
  });
  const ledgers = new Map<string, { workflowId: string; owed: number }>();
  const booksQueue = () => book.taskQueue || workflowInfo().taskQueue;

  /** Invoices settled and moved to their books are read back when told of again (a take-back, a new round). */
  async function readBack(invoices: ReadonlyArray<{ id: string; invoiceDate: string }>): Promise<void> {
    const away = invoices
      .filter((p) => book.invoice(p.id) === undefined)
      .map(({ id, invoiceDate }) => ({ id, invoiceDate }));
    if (away.length === 0) return;
    const found = await booksApi.readPurchaseBooks({ ...books, taskQueue: booksQueue(), invoices: away, stock: true });
    for (const { stock } of Object.values(found)) if (stock) book.restore(stock);
  }

  /** Settled invoices to their books, then out of the carry; `all`: every settled one (a hand-over to the next run). */
  async function putAway(all: boolean): Promise<void> {
    const settled = book.settledBefore(now(all ? 0 : kept.minutes * 60_000));
    if (settled.length === 0 || (!all && settled.length < kept.batch)) return;
    // A first sync can settle thousands at once: each write's input stays well under a payload's limit.
    for (let start = 0; start < settled.length; start += PUT_AWAY_PER_WRITE) {
      const batch = settled.slice(start, start + PUT_AWAY_PER_WRITE);
      await booksApi.writePurchaseBooks({
        ...books,
        taskQueue: booksQueue(),
        records: batch.map((stock) => ({ id: stock.purchaseId, invoiceDate: stock.invoiceDate, stock })),
      });
      // Only what did not change while the books were written: an invoice touched meanwhile stays for the next batch.
      const written = new Map(batch.map((inv) => [inv.purchaseId, inv.updatedAt]));
      book.forget([...written].filter(([id, at]) => book.invoice(id)?.updatedAt === at).map(([id]) => id));
    }
  }

  const mappingCounts: Record<number, number> = { ...input.carried?.mappingCounts };
  const looked = new Set<string>();
  const waitingLines = () =>
    book
      .waiting()
      .flatMap((inv) => inv.lines.filter((l) => !l.match).map((line) => ({ supplierPin: inv.supplierPin, line })));
  const mappingsHeld = () => Object.values(mappingCounts).reduce((n, c) => n + c, 0);

  /** The mappings these lines may have, read from their buckets once a run (changes here are written as they come). */
  async function loadMappings(lines: ReadonlyArray<{ supplierPin: string; line: SupplierLine }>): Promise<void> {
    const keys = [...new Set(lines.flatMap(({ supplierPin, line }) => lineKeys(supplierPin, line)))].filter(
      (key) => !looked.has(key),
    );
    if (keys.length === 0) return;
    book.mappings.load(await booksApi.findStockInMappings({ businessId, taskQueue: booksQueue(), keys }));
    for (const key of keys) looked.add(key);
  }

  /** What doors and operators changed, to the buckets: done before the door answers. */
  async function writeMappings(removeMerchant: boolean, allBuckets = false) {
    const { put, remove } = book.mappings.takeChanges();
    if (put.length === 0 && remove.length === 0 && !removeMerchant && !allBuckets) return { removed: 0 };
    const answer = await booksApi.changeStockInMappings({
      businessId,
      taskQueue: booksQueue(),
      put,
      remove,
      ...(removeMerchant ? { removeMerchant: true } : {}),
      ...(allBuckets ? { allBuckets: true } : {}),
    });
    Object.assign(mappingCounts, answer.buckets);
    return answer;
  }

  setHandler(purchasesSeenSignal, (seen) => {
    const checked = stockInSchemas().purchasesSeen.safeParse(seen);
    if (checked.success) inbox.push(checked.data as PurchasesSeen);
    else log.warn('a purchasesSeen signal that is not one was dropped', { businessId, issue: checked.error.issues[0] });
  });
  setHandler(getStockInStateQuery, () => book.state());
  setHandler(
    getBacklogQuery,
    () =>
      inbox.reduce((n, seen) => n + seen.purchases.reduce((m, p) => m + p.lines.length, 0), 0) +
      outbox.reduce((n, h) => n + h.lines.length, 0),
  );
  setHandler(
    mapLineUpdate,
    async (argument) => {
      const args = stockInSchemas().mapLineArgs.parse(argument);
      if ('itemId' in args) await requireItems([args.itemId]);
      const target = 'notStock' in args ? { notStock: true as const } : { itemId: args.itemId, factor: args.factor };
      await loadMappings(waitingLines());
      const names = await itemNames(book.unmappedDescriptions());
      const ticket = queue(book.mapLine(args, target, names, now()));
      await writeMappings(false);
      await handedOverUpTo(ticket);
      refresh();
      return book.invoice(args.purchaseId)!;
    },
    {
      validator: (argument) => {
        const args = required(
          'mapLine',
          '{"purchaseId": "…", "line": 0, "itemId": "…", "factor": 1} or ' +
            '{"purchaseId": "…", "line": 0, "notStock": true}',
          stockInSchemas().mapLineArgs,
          argument,
        );
        const line = book.waitingLine(args);
        if (typeof line === 'string') throw ApplicationFailure.nonRetryable(line, FAILURE_TYPES.invalidOperation);
      },
    },
  );
  setHandler(
    correctLineUpdate,
    async (argument) => {
      const args = stockInSchemas().correctLineArgs.parse(argument);
      await requireItems([args.itemId]);
      if (args.invoiceDate !== undefined) await readBack([{ id: args.purchaseId, invoiceDate: args.invoiceDate }]);
      // From here to the correction nothing waits, so no batch to the books can take the invoice away meanwhile.
      if (args.invoiceDate !== undefined && book.invoice(args.purchaseId) === undefined)
        throw ApplicationFailure.nonRetryable(
          `no supplier invoice ${args.purchaseId} dated ${args.invoiceDate} has stock recorded in its book`,
          FAILURE_TYPES.invalidOperation,
        );
      const line = book.stockedLine(args);
      if (typeof line === 'string') throw ApplicationFailure.nonRetryable(line, FAILURE_TYPES.invalidOperation);
      const handovers = book.correctLine(args, args.itemId, args.factor, now());
      if (handovers.length > 0) count('etims_stock_in_lines', { business_id: businessId, outcome: 'corrected' });
      await writeMappings(false);
      await handedOverUpTo(queue(handovers));
      return book.invoice(args.purchaseId)!;
    },
    {
      validator: (argument) => {
        const args = required(
          'correctLine',
          '{"purchaseId": "…", "line": 0, "itemId": "…", "factor": 1, "invoiceDate": "YYYY-MM-DD"}',
          stockInSchemas().correctLineArgs,
          argument,
        );
        // An invoice settled over an hour ago is in its purchases book: its date finds it there, in the handler.
        if (book.invoice(args.purchaseId) === undefined && args.invoiceDate !== undefined) return;
        const line = book.stockedLine(args);
        if (typeof line === 'string') throw ApplicationFailure.nonRetryable(line, FAILURE_TYPES.invalidOperation);
      },
    },
  );
  setHandler(
    putMappingsUpdate,
    async (argument) => {
      const { mappings, replace } = stockInSchemas().putMappingsArgs.parse(argument);
      await requireItems(mappings.flatMap((m) => ('itemId' in m ? [m.itemId] : [])));
      if (replace) book.mappings.removeMerchant();
      for (const m of mappings) book.mappings.put({ ...m, source: 'merchant' } as Mapping);
      await writeMappings(replace);
      // Lines waiting for exactly these mappings go in now.
      await loadMappings(waitingLines());
      await handedOverUpTo(queue(book.settleWaiting(await itemNames(book.unmappedDescriptions()), now())));
      refresh();
      return { mappings: mappingsHeld() };
    },
    {
      validator: (argument) =>
        void required(
          'putMappings',
          '{"mappings": [{"supplierPin": "…", "by": "description", "key": "…", "itemId": "…", "factor": 1}], ' +
            '"replace": false}',
          stockInSchemas().putMappingsArgs,
          argument,
        ),
    },
  );
  setHandler(
    removeMappingUpdate,
    async (argument) => {
      const cached = book.mappings.remove(stockInSchemas().removeMappingArgs.parse(argument));
      return { removed: (await writeMappings(false)).removed > 0 || cached };
    },
    {
      validator: (argument) =>
        void required(
          'removeMapping',
          '{"supplierPin": "…", "by": "description" | "code", "key": "…"}',
          stockInSchemas().removeMappingArgs,
          argument,
        ),
    },
  );

  /** Everything told so far, in order: a new confirmation adds, an invoice leaving `confirmed` takes back. */
  async function takeInbox(): Promise<void> {
    while (inbox.length > 0) {
      const seen = inbox.shift()!;
      book.settings = seen.settings;
      book.taskQueue = seen.taskQueue;
      await readBack(seen.purchases);
      await loadMappings([
        ...seen.purchases.flatMap((p) => p.lines.map((line) => ({ supplierPin: p.supplierPin, line }))),
        ...waitingLines(),
      ]);
      const names = await itemNames(book.unmappedDescriptions(seen.purchases));
      for (const purchase of seen.purchases) {
        const before = book.invoice(purchase.id)?.state;
        const handovers = book.observe(purchase, names, now());
        queue(handovers);
        const lines = handovers.flatMap((h) => h.lines);
        const added = lines.filter((l) => l.action === 'ADD').length;
        const back = lines.length - added;
        if (added > 0) count('etims_stock_in_lines', { business_id: businessId, outcome: 'added' }, added);
        if (back > 0) count('etims_stock_in_lines', { business_id: businessId, outcome: 'taken_back' }, back);
        const after = book.invoice(purchase.id)?.state;
        if (after === 'waiting' && before !== 'waiting') {
          const waiting = book.invoice(purchase.id)!.lines.filter((l) => !l.match).length;
          count('etims_stock_in_lines', { business_id: businessId, outcome: 'waiting' }, waiting);
        }
      }
      refresh();
    }
  }

  /**
   * One branch's lines at a time, in the order they were decided, each ledger handed more only once its backlog leaves
   * room (STOCK_PACE): what a ledger is owed is what it last said it held plus what it was handed since.
   */
  async function handOver(): Promise<void> {
    while (outbox.length > 0) {
      const next = outbox[0]!;
      const branch = next.branch ?? '';
      const known = ledgers.get(branch);
      if (known && known.owed + next.lines.length > pace.ledgerLines) {
        const { backlog } = await pacing.waitForStockRoom({
          workflowId: known.workflowId,
          atMost: Math.max(0, pace.ledgerLines - next.lines.length),
          waitMs: pace.waitMs,
        });
        known.owed = backlog ?? 0;
        if (known.owed + next.lines.length > pace.ledgerLines) continue;
      }
      const { ledgerWorkflowId } = await ledger.handOverStock({
        businessId,
        ...(next.branch === null ? {} : { branchId: next.branch }),
        lines: next.lines,
        taskQueue: book.taskQueue || workflowInfo().taskQueue,
      });
      // A ledger first handed lines in this run may hold others already: read before it is handed more.
      ledgers.set(branch, {
        workflowId: ledgerWorkflowId,
        owed: known ? known.owed + next.lines.length : pace.ledgerLines,
      });
      outbox.shift();
      handedOver++;
    }
  }

  const movedOn = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  // A carry of schema 1 holds the mappings themselves: they go to their buckets first.
  if ((input.carried?.mappings.length ?? 0) > 0) {
    for (const m of input.carried!.mappings) book.mappings.put(m);
    await writeMappings(false);
  }
  // What a run was handed settled goes to the books now, not at the first wake.
  await putAway(false);
  for (;;) {
    const work = () => inbox.length > 0 || outbox.length > 0 || movedOn();
    await condition(work, VERSION_CHECK_MS);
    await takeInbox();
    await handOver();
    await putAway(false);
    setGauge('etims_stock_in_lines_waiting', book.state().totals.linesWaiting, { business_id: businessId });
    const info = workflowInfo();
    if (movedOn() || info.continueAsNewSuggested || info.historyLength > HISTORY_EVENTS_PER_RUN) {
      await condition(allHandlersFinished);
      if (inbox.length > 0 || outbox.length > 0) continue;
      await putAway(true);
      if (inbox.length > 0 || outbox.length > 0 || !allHandlersFinished()) continue;
      await writeMappings(false, movedOn());
      const carried = { ...book.carry(), mappingCounts, schema: STOCK_IN_CARRY_SCHEMA };
      await makeContinueAsNewFunc<typeof stockInWorkflow>(
        movedOn() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {},
      )({
        businessId,
        carried,
        ...(input.settledKept ? { settledKept: input.settledKept } : {}),
        ...(input.pace ? { pace: input.pace } : {}),
      });
    }
  }
}

/** Lines waiting for a mapping, in the details page, with `NeedsAttention`. */
function attentionBoard(book: StockInBook): () => void {
  const title = '**Supplier invoice lines waiting for a mapping** (update `mapLine` with an item, or `notStock`):';
  return attentionList(STOCK_IN_NEEDS_MAPPING, title, () =>
    book
      .waiting()
      .map((inv) => {
        const lines = inv.lines
          .filter((l) => !l.match)
          .map((l) => {
            const offered = (l.candidates ?? []).map((c) => `\`${c.itemId}\` ${c.name}`).join(', ');
            return (
              `  - line ${l.line}: "${l.description}"${l.code ? ` (code ${l.code})` : ''}, ` +
              `${l.quantity} × ${l.unitPrice}` +
              (offered ? `; maybe ${offered}` : '')
            );
          });
        return [
          `- invoice \`${inv.purchaseId}\` (${inv.supplierInvoiceNumber}, ${inv.invoiceDate}) from ` +
            `${inv.supplierName} (PIN ${inv.supplierPin}), branch ${inv.branch}:`,
          ...lines,
        ].join('\n');
      })
      .join('\n'),
  );
}
