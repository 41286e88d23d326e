// `npm run purchases -- stock-in | map …` against the tests' Temporal server and the real stock-in workflow.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPurchasesBookActivities } from '../../activities/purchases-book.js';
import { createStockInMappingsActivities } from '../../activities/stock-in-mappings.js';
import { answerNames } from '../../src/contracts/item-names.js';
import { complianceTaskQueue } from '../../src/contracts/task-queues.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  getStockInStateQuery,
  purchasesSeenSignal,
  stockInWorkflowId,
  type SeenPurchase,
  type StockInInput,
} from '../../src/contracts/stock-in.js';
import { eventually } from '../helpers/eventually.js';
import { runCli } from '../helpers/run-cli.js';
import { getTestEnv } from '../helpers/temporal.js';
import { useTestWorker } from '../helpers/test-worker.js';

// The workflows with stand-ins for the activities that reach the service: the hand-over to a ledger keeps what it got,
// and the business is served by the one application; its item names are answered on the compliance queue (a worker
// of its own). The mapping buckets and purchases books are the real workflows, through their real activities.
const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const handedOver: Array<{ businessId: string; lines: unknown[] }> = [];
const { client, taskQueue } = useTestWorker(workflowsPath, 'stock-in-cli', {}, (temporal) => ({
  handOverStock: async (input: { businessId: string; lines: unknown[] }) => {
    handedOver.push(input);
    return { ledgerWorkflowId: 'stand-in' };
  },
  placeBusiness: async ({ businessId }: { businessId: string }) => ({ application: null, fairnessKey: businessId }),
  ...createStockInMappingsActivities({ temporal: { client: temporal } }),
  ...createPurchasesBookActivities({ temporal: { client: temporal } }),
}));
const ITEMS = [
  { id: 'itm_tea', name: 'Kericho Tea 500g' },
  { id: 'itm_tea_1kg', name: 'Kericho Tea 1kg' },
  { id: 'itm_sugar', name: 'Sugar 2kg' },
];
let compliance: { worker: Worker; running: Promise<void> } | undefined;

beforeAll(async () => {
  const env = await getTestEnv();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: complianceTaskQueue(taskQueue),
    activities: {
      matchItemNames: async ({ descriptions = [], itemIds = [] }: { descriptions?: string[]; itemIds?: string[] }) => ({
        names: answerNames(ITEMS, descriptions),
        unknownItemIds: itemIds.filter((id) => !ITEMS.some((item) => item.id === id)),
      }),
    },
  });
  compliance = { worker, running: worker.run() };
});

afterAll(async () => {
  compliance?.worker.shutdown();
  await compliance?.running;
});

const purchases = (...args: string[]) => runCli('purchases', args);
/** Nothing listens there: a command refused before it connects still answers. */
const offline = (...args: string[]) => runCli('purchases', args, { address: '127.0.0.1:1' });

const HEADER = 'supplierPin,by,key,itemId,factor,notStock,source';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'stock-in-cli-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const target = path.join(dir, name);
  await writeFile(target, text);
  return target;
}

async function startStockIn(): Promise<{ businessId: string; workflowId: string }> {
  const businessId = `biz-${randomUUID()}`;
  const workflowId = stockInWorkflowId(taskQueue, businessId);
  await client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
    workflowId,
    taskQueue,
    args: [{ businessId } satisfies StockInInput],
  });
  return { businessId, workflowId };
}

/** What the purchases sync tells the stock-in of one confirmed invoice. */
async function tell(
  workflowId: string,
  id: string,
  lines: Array<{ description: string; code?: string; quantity: number }>,
) {
  const purchase: SeenPurchase = {
    id,
    status: 'confirmed',
    supplierPin: 'P051234567X',
    supplierName: 'Kabras Sugar',
    supplierInvoiceNumber: `INV-${id}`,
    invoiceDate: '2025-03-02',
    branch: null,
    lines: lines.map((l) => ({ code: null, hsCode: null, unitPrice: 100, ...l })),
  };
  await client.workflow.getHandle(workflowId).signal(purchasesSeenSignal, {
    purchases: [purchase],
    settings: { from: '2025-01-01', allOrNothing: false },
    taskQueue,
  });
  return eventually(
    () => client.workflow.getHandle(workflowId).query(getStockInStateQuery),
    (state) => state.invoices.some((inv) => inv.purchaseId === id && inv.state !== 'not_confirmed'),
    { what: `invoice ${id} settled or waiting` },
  );
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

/** The CLI as runCli starts it, its output read as it comes: `--watch` draws before it ends. */
function following(args: string[]) {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    PAYLOAD_ENCRYPTION: 'off',
  };
  const child = spawn(tsx, ['src/cli/purchases.ts', ...args], { cwd: root, env });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.resume();
  const code = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    code,
    stdout: () => stdout,
    shown: (text: string) =>
      eventually(
        () => stdout,
        (out) => out.includes(text),
        { timeoutMs: 30_000, what: text },
      ),
    stop: () => child.kill(),
  };
}

describe('npm run purchases -- stock-in and map: the command line', () => {
  it(
    'refuses a wrong command line with exit 2 and one line saying why, before connecting',
    { timeout: 90_000 },
    async () => {
      const cases: Array<[string[], string]> = [
        [['map', 'set', 'biz', '--supplier', 'P1', '--description', 'x'], 'error: give --item <itemId>'],
        [['map', 'set', 'biz', '--supplier', 'P1', '--item', 'i'], 'error: give --description <text> or --code <code>'],
        [
          ['map', 'set', 'biz', '--supplier', 'P1', '--code', 'C', '--item', 'i', '--not-stock'],
          'error: give --item or --not-stock, not both',
        ],
        [['map', 'line', 'biz', 'pur_1', 'two', '--item', 'i'], 'lineIndex must be a whole number from 0'],
        [['map', 'line', 'biz', 'pur_1', '1', '--not-stock', '--factor', '2'], 'error: --factor goes with --item'],
        [['map', 'correct', 'biz', 'pur_1', '1'], 'error: correct needs --item <itemId>'],
        [['map', 'remove', 'biz', '--code', 'C'], "error: required option '--supplier <PIN>' not specified"],
        [['stock-in', 'biz', '--watch', '--json'], 'error: --watch draws text: leave out --json'],
        [['stock-in', ' '], 'error: invalid stock-in reference: businessId must not be empty'],
      ];
      const results = await Promise.all(cases.map(([args]) => offline(...args)));
      results.forEach((result, i) => {
        expect(result.code, cases[i]![0].join(' ')).toBe(2);
        expect(result.stderr.split('\n')[0]).toContain(cases[i]![1]);
        expect(result.stdout).toBe('');
      });
    },
  );

  it(
    'names every bad row of an import on standard error, and imports nothing (exit 2)',
    { timeout: 60_000 },
    async () => {
      const bad = await file('bad.csv', `${HEADER}\nP1,code,C1,itm_1,0,,\n,code,C2,itm_2,,,\nP1,code,C3,itm_3,,,\n`);
      const result = await offline('map', 'import', 'biz', bad);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        'row 2: factor must be more than 0',
        'row 3: supplierPin is required',
        'error: 2 problem(s) on 2 row(s) of the file: nothing was imported',
      ]);
      const good = await offline(
        'map',
        'import',
        'biz',
        await file('good.csv', `${HEADER}\nP1,code,C1,itm_1,,,\n`),
        '--dry-run',
      );
      expect(good.stdout.trim()).toBe('1 mapping(s) ready: nothing wrong found, nothing sent');
      expect(good.code).toBe(0);
    },
  );
});

describe('npm run purchases -- stock-in and map: against a running stock-in', () => {
  // A few CLI processes in a row: more than the default 30 s on a loaded machine.
  it(
    'imports a CSV, lists and exports it, shows the invoices it settles, and passes on refusals',
    { timeout: 120_000 },
    async () => {
      const businessId = `biz-${randomUUID()}`;
      const workflowId = stockInWorkflowId(taskQueue, businessId);
      await client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
        workflowId,
        taskQueue,
        args: [{ businessId } satisfies StockInInput],
      });
      const q = ['--task-queue', taskQueue];

      const csv = await file(
        'mappings.csv',
        `${HEADER}\nP051234567X,description,Sugar 50kg bag,itm_sugar,50,false,learned\nP051234567X,code,DLV,,,true,\n`,
      );
      const imported = await purchases('map', 'import', businessId, csv, ...q);
      expect(imported.stderr).toBe('');
      expect(imported.stdout.trim()).toBe('imported 2 mapping(s): the stock-in holds 2 now');
      expect(imported.code).toBe(0);

      const listed = await purchases('map', 'list', businessId, ...q);
      expect(listed.code).toBe(0);
      expect(listed.stdout.trim().split('\n')).toEqual([
        'SUPPLIER     BY           KEY             ITEM         FACTOR  SOURCE',
        'P051234567X  code         DLV             (not stock)          merchant',
        'P051234567X  description  Sugar 50kg bag  itm_sugar    50      merchant',
        '2 mapping(s)',
      ]);

      const out = path.join(dir, 'exported.csv');
      const exported = await purchases('map', 'export', businessId, '--out', out, ...q);
      expect(exported.code).toBe(0);
      expect(await readFile(out, 'utf8')).toBe(
        `${HEADER}\nP051234567X,code,DLV,,,true,merchant\nP051234567X,description,Sugar 50kg bag,itm_sugar,50,false,merchant\n`,
      );

      // Every line of the invoice is mapped: it goes in without reading the item names.
      await tell(workflowId, 'pur_1', [
        { description: 'SUGAR 50KG BAG', quantity: 2 },
        { description: 'Delivery', code: 'DLV', quantity: 1 },
      ]);
      expect(handedOver).toMatchObject([
        { businessId, lines: [{ itemId: 'itm_sugar', action: 'ADD', quantity: 100 }] },
      ]);

      const shown = await purchases('stock-in', businessId, ...q);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(
        /pur_1 +added +Kabras Sugar \(P051234567X\) +INV-pur_1 +2025-03-02 +\(first\) +1 +0/,
      );
      const json = await purchases('stock-in', businessId, '--json', ...q);
      expect(JSON.parse(json.stdout)).toMatchObject({ businessId, totals: { linesAdded: 1, linesWaiting: 0 } });

      // The workflow's validator refuses it, and says why.
      const refused = await purchases('map', 'line', businessId, 'pur_1', '0', '--item', 'itm_other', ...q);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `mapLine of ${workflowId} was refused: line 0 of invoice pur_1 is not waiting for a mapping (the invoice is added)`,
      );

      const removed = await purchases('map', 'remove', businessId, '--supplier', 'P051234567X', '--code', 'DLV', ...q);
      expect(removed.stdout.trim()).toBe('removed');
      expect(removed.code).toBe(0);

      const none = await purchases('stock-in', `biz-${randomUUID()}`, ...q);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('no stock-in for business biz-');
      expect(none.stderr).toContain('it starts with the first supplier invoice the purchases sync tells it');
    },
  );

  it(
    '--watch shows a waiting line with the items it may be, and ends once it is mapped',
    { timeout: 120_000 },
    async () => {
      const { businessId, workflowId } = await startStockIn();
      await tell(workflowId, 'pur_2', [{ description: 'Tea leaves 500g', quantity: 3 }]);
      const q = ['--task-queue', taskQueue];

      const watching = following(['stock-in', businessId, '--watch', '--every', '1', ...q]);
      try {
        await watching.shown('[..............................] 0/1 invoices settled, 1 waiting');
        expect(watching.stdout()).toContain('line 0: "Tea leaves 500g", 3 × 100');
        expect(watching.stdout()).toContain('maybe: itm_tea (Kericho Tea 500g), itm_tea_1kg (Kericho Tea 1kg)');

        const mapped = await runCli('purchases', ['map', 'line', businessId, 'pur_2', '0', '--item', 'itm_tea', ...q]);
        expect(mapped.stderr).toBe('');
        expect(mapped.code).toBe(0);
        expect(mapped.stdout).toContain(
          'pur_2: INV-pur_2 of 2025-03-02 from Kabras Sugar (P051234567X), branch (first): added',
        );
        expect(mapped.stdout).toMatch(/0 +Tea leaves 500g +3 +itm_tea × 1 \(operator\) +3/);

        expect(await watching.code).toBe(0);
        expect(watching.stdout().trim().split('\n').at(-1)).toBe(
          '[##############################] 1/1 invoices settled, 0 waiting',
        );
      } finally {
        watching.stop();
      }
      // Remembered for the supplier.
      const listed = await runCli('purchases', ['map', 'list', businessId, '--json', ...q]);
      expect(JSON.parse(listed.stdout)).toEqual([
        {
          supplierPin: 'P051234567X',
          by: 'description',
          key: 'Tea leaves 500g',
          itemId: 'itm_tea',
          factor: 1,
          source: 'learned',
        },
      ]);
    },
  );
});
