/**
 * The demo's stock-in: the Nairobi business (stock-in on in the local tenants file) keeps a mapping for its
 * supplier's carton of milk, confirms one supplier invoice on the dashboard and runs its purchases sync; the one line
 * nothing matches (a delivery charge) is then marked not stock through the CLI, as a person would. The items'
 * quantities on hand at the invoice's branch, read from the service, must rise by exactly the invoice's units.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { syncPurchasesNow } from '../../src/client/purchases.js';
import { StockInClient, StockInNotStartedError } from '../../src/client/stock-in.js';
import { mappingsToCsv } from '../../src/client/stock-in-csv.js';
import type { Env } from '../../src/config/env.js';
import type { InvoiceStock } from '../../src/contracts/stock-in.js';
import { getStockLedgerStateQuery, stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import { mappingFor, unitsAdded, type MappedLine } from '../../sandbox/compliance/supplier-lines.js';
import { DEMO, DEMO_STOCK_IN } from '../../sandbox/default-fixture.js';
import type { Sandbox } from '../../sandbox/server.js';
import type { PieceOutcome } from './demo-system.js';
import { cliCommandLine, runStackCli } from './stack-cli.js';
import type { Stack } from './stack.js';

const INVOICE = DEMO_STOCK_IN.invoices[0];
/** A step of the piece taking longer than this (beyond a ledger's own delay) is stuck. */
const STEP_MS = 60_000;

/**
 * How long the demo's stock ledgers may hold an item's lines back to merge them while the budget is contended, as
 * the demo's sales leave it: by default 3 minutes, which the piece would sit through twice (the sales' lines before
 * it reads the quantities, then the invoice's). A setting of the environment's own is kept.
 */
export const DEMO_STOCK_MAX_DELAY = '10 seconds';

export function withDemoStockDelay(env: Env): Env {
  return env.STOCK_MAX_DELAY?.trim() ? env : { ...env, STOCK_MAX_DELAY: DEMO_STOCK_MAX_DELAY };
}

/** One item's quantity on hand before and after, and what the invoice should have added. */
export interface StockRise {
  name: string;
  before: number;
  after: number;
  expected: number;
}

/** `Sugar 2kg  74 → 84  (+10)`, names and numbers aligned; ok only if every item rose by exactly its units. */
export function stockRiseReport(rises: readonly StockRise[]): { lines: string[]; ok: boolean } {
  const nameWidth = Math.max(...rises.map((r) => r.name.length));
  const beforeWidth = Math.max(...rises.map((r) => String(r.before).length));
  const afterWidth = Math.max(...rises.map((r) => String(r.after).length));
  const lines = rises.map((r) => {
    const rose = r.after - r.before;
    const off = rose === r.expected ? '' : `, expected +${r.expected}`;
    return `${r.name.padEnd(nameWidth)}  ${String(r.before).padStart(beforeWidth)} → ${String(r.after).padStart(afterWidth)}  (${rose >= 0 ? '+' : ''}${rose}${off})`;
  });
  return { lines, ok: rises.every((r) => r.after - r.before === r.expected) };
}

async function poll<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = STEP_MS,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The branch's ledger with nothing in flight: the demo's sales deduct from the same items there, and a movement of
 * theirs landing in between would be read as the stock-in's.
 */
async function ledgerIdle(stack: Stack, businessId: string, branchId: string, timeoutMs: number): Promise<void> {
  const handle = stack.client.workflow.getHandle(stockLedgerWorkflowId(WORKFLOW_TASK_QUEUE, businessId, branchId));
  await poll(
    () =>
      handle.query(getStockLedgerStateQuery).then(
        (state) => state.open.length === 0 && Object.keys(state.pending).length === 0,
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return true;
          throw err;
        },
      ),
    (idle) => idle,
    `the stock ledger of ${branchId} to send what the sales handed it`,
    timeoutMs,
  );
}

function quantities(sandbox: Sandbox, businessId: string, branchId: string, itemIds: readonly string[]) {
  return Promise.all(itemIds.map((itemId) => sandbox.inspector.quantityOnHand(businessId, branchId, itemId)));
}

const unmatched = (invoice: InvoiceStock | undefined) => invoice?.lines.filter((l) => !l.match) ?? [];

export async function demoStockIn(stack: Stack): Promise<PieceOutcome> {
  const { sandbox } = stack;
  if (!sandbox) return { ok: false, note: "needs the stack's own sandbox" };
  const businessId = DEMO.businesses.nairobi;
  const { branchId, lines } = INVOICE;
  const expected = unitsAdded(lines);
  const itemIds = Object.keys(expected);
  const business = sandbox.fixture.compliance.businesses.find((b) => b.id === businessId);
  const nameOf = (itemId: string) => business?.items.find((i) => i.id === itemId)?.name ?? itemId;
  const branchName = business?.branches.find((b) => b.id === branchId)?.name ?? branchId;

  // A ledger holds an item's lines back at most its max delay: waiting longer than that means something is stuck.
  const reporting = stack.settings.stockReporting(businessId);
  const stockMs = STEP_MS + (reporting.mode === 'coalesced' ? reporting.maxDelaySeconds * 1000 : 0);
  await ledgerIdle(stack, businessId, branchId, stockMs);
  const before = await quantities(sandbox, businessId, branchId, itemIds);

  // The merchant's own mapping, as a spreadsheet they keep would hold it: the carton by the supplier's code.
  const carton = lines.find((l): l is MappedLine => l.kind === 'mapped')!;
  const csv = mappingsToCsv([{ ...mappingFor(DEMO_STOCK_IN.supplier.pin, carton), source: 'merchant' }]);
  const stockIn = new StockInClient(stack.client);
  const install = () => stockIn.importMappingsCsv(businessId, csv);
  // The stock-in starts with the first confirmation its sync tells it; without one yet, the mapping follows it.
  const installedFirst = await install().then(
    () => true,
    (err: unknown) => {
      if (err instanceof StockInNotStartedError) return false;
      throw err;
    },
  );

  await sandbox.inspector.reviewPurchase(INVOICE.id, 'confirmed');
  await syncPurchasesNow(stack.client, businessId, { wait: true, timeoutMs: 120_000 });
  if (!installedFirst) await install();

  const waiting = await poll(
    async () => (await stockIn.state(businessId)).invoices.find((i) => i.purchaseId === INVOICE.id),
    (invoice) => invoice?.state === 'waiting' && unmatched(invoice).length === 1,
    `${INVOICE.id} to wait for a mapping of one line`,
  );
  const fee = unmatched(waiting)[0]!;
  if (fee.description !== 'Delivery charge')
    return {
      ok: false,
      note: `${INVOICE.id} waits for line ${fee.line} "${fee.description}", not the delivery charge`,
    };
  console.log(
    `    ${INVOICE.id} (${INVOICE.supplierInvoiceNumber} from ${DEMO_STOCK_IN.supplier.name}) confirmed; ` +
      `line ${fee.line} "${fee.description}" waits for a mapping`,
  );

  const args = ['map', 'line', businessId, INVOICE.id, String(fee.line), '--not-stock'];
  console.log(`    $ ${cliCommandLine('purchases', args)}`);
  const cli = await runStackCli(stack, 'purchases', args);
  for (const line of cli.stdout.trimEnd().split('\n').filter(Boolean)) console.log(`      ${line}`);
  if (cli.code !== 0)
    return { ok: false, note: `the CLI exited ${cli.code}: ${cli.stderr.trim().split('\n').at(-1) ?? ''}` };

  const targets = before.map((q, i) => q + expected[itemIds[i]!]!);
  const after = await poll(
    () => quantities(sandbox, businessId, branchId, itemIds),
    (now) => now.every((q, i) => q >= targets[i]!),
    `the quantities on hand at ${branchName} to rise`,
    stockMs,
  );
  const rises = itemIds.map((itemId, i) => ({
    name: nameOf(itemId),
    before: before[i]!,
    after: after[i]!,
    expected: expected[itemId]!,
  }));
  const report = stockRiseReport(rises);
  for (const line of report.lines) console.log(`    ${line}`);
  const added = rises.map((r) => `${r.name} ${r.after - r.before >= 0 ? '+' : ''}${r.after - r.before}`).join(', ');
  return {
    ok: report.ok,
    note: `${INVOICE.id} at ${branchName}: ${added}; "${fee.description}" not stock through the CLI`,
  };
}
