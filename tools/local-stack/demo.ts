/**
 * `npm run demo`: starts the whole stack with its two merchants on two keys (local-tenants.ts: `demo-retail`, the
 * Nairobi business, and `other-integrator`, the Kisumu business, each its own compliance application and books),
 * pushes one sale of the first down every path (immediate, async with callback, async by polling, unregistered item,
 * rejection then retry, refund to credit note) and two of the second, then syncs supplier invoices to an NDJSON
 * file, confirms one supplier invoice of the first and takes its stock in (its one unknown line mapped through the
 * CLI, the items' quantities on hand at the service rising by its units), processes a sync batch of each merchant's
 * books, reconciles the demo business and onboards a small catalogue for the second merchant (its report printed),
 * then closes the first merchant's day (its table printed) and matches a till's close with one deliberate difference.
 * Each sale and batch shows the application it went through, checked against the sandbox's record of which
 * application's key filed it. It prints a line per path as it ends and a summary table, and exits 0 only if
 * everything ended as expected. It needs the stack's own sandbox: the paths are chosen with the sandbox's demo
 * items, trader invoice prefixes, purchases (those for the stock-in among them) and bill payments.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SalesClient } from '../../src/client/sales-client.js';
import { createLogger } from '../../src/logger.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startStack, type Stack } from './stack.js';
import type { SaleInput, SaleState } from '../../src/contracts/sale.js';
import { refundWorkflowId } from '../../src/contracts/refund.js';
import {
  DEMO_SYNC_BATCH_IDS,
  demoPurchasesSync,
  demoReconciliation,
  demoSyncBatch,
  demoCatalogueImport,
  type PieceOutcome,
} from './demo-system.js';
import { demoStockIn, withDemoStockDelay } from './demo-stock-in.js';
import { demoFiscalDay } from './demo-fiscal-day.js';
import { LOCAL_MERCHANTS, type LocalMerchant } from './local-tenants.js';
import { stackShape } from './stack-shape.js';
import { progressLine, summaryTables, verdictLine, type DemoResult } from './demo-output.js';
import { createProgram, runProgram } from '../../src/cli/command.js';

interface DemoCase {
  path: string;
  /** Whose sale it is: its business, and the application it must go through. */
  merchant: LocalMerchant;
  input: SaleInput;
  /** Runs while the sale is in flight (e.g. holding back its callback), before waiting for the end. */
  before?: (stack: Stack) => Promise<void>;
  /** Drives the sale once it is signed (e.g. a refund) and says whether it ended as expected. */
  finish: (sales: SalesClient, state: SaleState) => Promise<{ ok: boolean; note: string }>;
}

const runId = Date.now().toString(36).toUpperCase();
const today = new Date().toISOString().slice(0, 10);

const { retail, other } = LOCAL_MERCHANTS;

function sale(
  prefix: string,
  lines: SaleInput['lines'],
  refundWindowDays = 0,
  businessId: string = DEMO.businesses.nairobi,
): SaleInput {
  return {
    businessId,
    traderInvoiceNumber: `${prefix}DEMO-${runId}`,
    saleDate: today,
    lines,
    options: { refundWindowDays, outcomeTimeout: '2 minutes' },
  };
}

const basket = [
  { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
  { itemId: DEMO.items.milk, quantity: 3, unitPrice: 65 },
];
const kisumuBasket = [{ itemId: DEMO.items.kisumuRice, quantity: 2, unitPrice: 900 }];
const signed = async (_sales: SalesClient, state: SaleState) => ({ ok: state.sale?.status === 'completed', note: '' });

const CASES: DemoCase[] = [
  { path: 'immediate (201)', merchant: retail, input: sale('', basket), finish: signed },
  { path: 'async, by callback', merchant: retail, input: sale('ASYNC-', basket), finish: signed },
  {
    path: 'async, by polling',
    merchant: retail,
    input: sale('ASYNC-POLL-', basket),
    // The sandbox holds this sale's result callback back for a minute, so the workflow's polling finds the outcome.
    before: async (stack) => {
      await stack.sandbox?.inspector.addFault({ kind: 'callback-delay', delayMs: 60_000, times: 1 });
    },
    finish: signed,
  },
  {
    path: 'unregistered item',
    merchant: retail,
    input: sale('ITEM-', [{ itemId: DEMO.items.bathSoap, quantity: 1, unitPrice: 120 }, ...basket]),
    finish: async (_s, state) => ({ ok: state.sale?.status === 'completed', note: 'item registered first' }),
  },
  {
    path: 'rejection, then retry',
    merchant: retail,
    input: sale('FLAKY-', basket),
    finish: async (_s, state) => ({
      ok: state.sale?.status === 'completed' && state.submissions >= 2,
      note: `${state.submissions} submissions`,
    }),
  },
  {
    path: 'refund to credit note',
    merchant: retail,
    input: sale('REFUND-', basket, 30),
    finish: async (sales, state) => {
      const result = await sales.refund(state.businessId, state.traderInvoiceNumber, {
        reason: '06',
        returnDate: today,
        traderInvoiceNumber: `CN-${state.traderInvoiceNumber}`,
      });
      const receipt = result.creditNote.receipt;
      return {
        ok: result.creditNote.status === 'completed' && receipt?.receiptLabel === 'NC',
        note: `credit note ${receipt?.cuInvoiceNo ?? '?'} by ${refundWorkflowId(state.businessId, state.traderInvoiceNumber)}`,
      };
    },
  },
  // The other merchant, on its own key and budget: its sales go through its own application.
  {
    path: 'other merchant, immediate',
    merchant: other,
    input: sale('KSM-', kisumuBasket, 0, DEMO.businesses.kisumu),
    finish: signed,
  },
  {
    path: 'other merchant, async',
    merchant: other,
    input: sale('ASYNC-KSM-', kisumuBasket, 0, DEMO.businesses.kisumu),
    finish: signed,
  },
];

/**
 * Which application's key filed the sale, as the sandbox recorded it: the evidence that the worker routed the
 * business to the application serving it. Empty when the sandbox holds no such sale.
 */
async function filedBy(stack: Stack, input: SaleInput): Promise<string> {
  const documents =
    (await stack.sandbox?.inspector.documents({
      businessId: input.businessId,
      traderInvoiceNumber: input.traderInvoiceNumber,
      type: 'sale',
    })) ?? [];
  return [...new Set(documents.map((d) => d.applicationId))].join(', ');
}

async function waitUntil(
  sales: SalesClient,
  input: SaleInput,
  done: (s: SaleState) => boolean,
  timeoutMs: number,
): Promise<SaleState> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const state = await sales.getState(input.businessId, input.traderInvoiceNumber);
    if (done(state)) return state;
    if (Date.now() > until)
      throw new Error(`timed out in step ${state.step}${state.parked ? ` (parked: ${state.parked.code})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<number> {
  const shape = stackShape(process.env);
  if (shape.kind !== 'merchants') {
    const set = shape.kind === 'tenants' ? shape.variable : shape.because;
    console.error(`npm run demo serves its two merchants from its own sandbox's demo data: unset ${set}`);
    return 2;
  }
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'error', name: 'demo' });
  const purchasesFile = join(mkdtempSync(join(tmpdir(), 'etims-demo-')), 'purchases.ndjson');
  const began = performance.now();
  const elapsed = (since: number) => (performance.now() - since) / 1000;
  console.log('starting the stack: Temporal dev server, sandbox, workers (bundling the workflows takes a few seconds)');
  const stack = await startStack({
    env: withDemoStockDelay(process.env),
    logger,
    headless: true,
    dbFilename: null,
    purchasesFile,
  });
  for (const merchant of Object.values(LOCAL_MERCHANTS)) {
    console.log(
      `  merchant ${merchant.application}: ${merchant.businesses.join(', ')} on its own key (${merchant.serviceApplicationId}, ${merchant.requestsPerMinute}/min), books ${merchant.books.application}`,
    );
  }
  const sales = new SalesClient(stack.client);
  const saleResults: DemoResult[] = [];
  const pieceResults: DemoResult[] = [];
  // Names aligned across both lists, so the progress lines read as one column.
  const pieces: Array<[string, () => Promise<PieceOutcome>]> = [
    ['purchases sync (NDJSON sink)', () => demoPurchasesSync(stack, purchasesFile)],
    ['stock-in (confirmed supplier invoice)', () => demoStockIn(stack)],
    ['sync batch, processed to the end', () => demoSyncBatch(stack, DEMO_SYNC_BATCH_IDS.retail, retail)],
    ['other merchant, sync batch', () => demoSyncBatch(stack, DEMO_SYNC_BATCH_IDS.other, other)],
    ['reconciliation', () => demoReconciliation(stack, runId)],
    ['other merchant, catalogue import', () => demoCatalogueImport(stack, runId, other)],
    ["the day's close, and a till's", () => demoFiscalDay(stack, runId, purchasesFile)],
  ];
  console.log(
    `stack ready in ${elapsed(began).toFixed(1)} s; ${CASES.length} sales (one down each path), then ${pieces.length} other pieces`,
  );
  const nameWidth = Math.max(...CASES.map((c) => c.path.length), ...pieces.map(([name]) => name.length));
  const ended = (into: DemoResult[], result: DemoResult) => {
    into.push(result);
    console.log(progressLine(result, nameWidth));
  };
  try {
    for (const demo of CASES) {
      const started = performance.now();
      const invoice = demo.input.traderInvoiceNumber;
      try {
        await demo.before?.(stack);
        await sales.startSale(demo.input);
        const state = await waitUntil(
          sales,
          demo.input,
          (s) => ['completed', 'cancelled', 'failed'].includes(s.step),
          120_000,
        );
        const verdict = await demo.finish(sales, state);
        const final = await waitUntil(
          sales,
          demo.input,
          (s) => s.step === 'completed' || s.step === 'cancelled' || s.step === 'failed',
          60_000,
        );
        const by = await filedBy(stack, demo.input);
        const routed = by === demo.merchant.serviceApplicationId;
        const misrouted = routed
          ? ''
          : `filed by ${by || 'no application'}, expected ${demo.merchant.serviceApplicationId}`;
        const ok = verdict.ok && routed && final.step === 'completed';
        ended(saleResults, {
          name: demo.path,
          via: `${demo.merchant.application} (${by || '?'})`,
          outcome: ok ? 'ok' : 'UNEXPECTED',
          seconds: elapsed(started),
          invoice,
          receipt: final.sale?.receipt?.cuInvoiceNo ?? '-',
          note: ok ? verdict.note : [verdict.note, misrouted, `ended in step ${final.step}`].filter(Boolean).join('; '),
        });
      } catch (err) {
        ended(saleResults, {
          name: demo.path,
          via: demo.merchant.application,
          outcome: 'FAILED',
          seconds: elapsed(started),
          invoice,
          note: err instanceof Error ? err.message : String(err),
        });
      }
    }
    // Beyond sales: the rest of the system on the same stack.
    for (const [name, run] of pieces) {
      const started = performance.now();
      try {
        const outcome = await run();
        ended(pieceResults, {
          name,
          ...(outcome.via ? { via: outcome.via } : {}),
          outcome: outcome.ok ? 'ok' : 'UNEXPECTED',
          seconds: elapsed(started),
          note: outcome.note,
        });
      } catch (err) {
        ended(pieceResults, {
          name,
          outcome: 'FAILED',
          seconds: elapsed(started),
          note: err instanceof Error ? err.message : String(err),
        });
      }
    }
  } finally {
    console.log(`\n${summaryTables(saleResults, pieceResults)}\n`);
    await stack.stop();
  }
  console.log(`${verdictLine(saleResults, pieceResults)} (${elapsed(began).toFixed(0)} s)`);
  return [...saleResults, ...pieceResults].every((r) => r.outcome === 'ok') ? 0 : 1;
}

runProgram(
  createProgram(
    'npm run demo --',
    "Starts the whole stack with two merchants on two keys over its own sandbox, pushes one sale down every path and two of the other merchant (each showing the application it went through), syncs purchases, confirms a supplier invoice and takes its stock in (mapping its unknown line through the CLI), processes a sync batch of each merchant's books, reconciles the demo business, onboards a small catalogue for the second merchant (printing its report), closes the first merchant's day (printing its table) and matches a till's close against it; prints a line per path as it ends and a summary table; exits 0 only if everything ended as expected.",
  ).act(main),
);
