/**
 * The day book against the real stack: sales and a refund signed by the sandbox are each counted once in their
 * control unit's day, to the cent of what the service signed; a till's close is answered with every difference; the
 * close delivers the summary to the sink once. The book's counting is unit-tested in fiscal-day-book.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';
import { FiscalDaysClient } from '../../src/client/fiscal-days.js';
import { SalesClient } from '../../src/client/sales-client.js';
import {
  DEFAULT_FISCAL_DAY_SETTINGS,
  FISCAL_DAY_WORKFLOW_TYPE,
  addBands,
  closeFiscalDayUpdate,
  fiscalDayWorkflowId,
  isoDateOf,
  taxBandsOf,
  type FiscalDayEvent,
  type TaxBands,
} from '../../src/contracts/fiscal-day.js';
import { openNdjsonSink } from '../../src/purchases/event-sink.js';
import pino from 'pino';
import { createFiscalDayActivities } from '../../activities/fiscal-day.js';
import { runSalesCli } from '../helpers/run-cli.js';
import { DEMO, eventually, invoiceNumber, saleInput, useSaleHarness } from './harness.js';

const execFileAsync = promisify(execFile);
const sinkPath = join(tmpdir(), `fiscal-day-${randomUUID()}.ndjson`);
const h = useSaleHarness({ perProcess: async () => ({ purchasesSink: await openNdjsonSink(sinkPath) }) });

describe('the day book', () => {
  it('counts each signed sale and credit note once, matches a till close naming every difference, and closes once', async () => {
    const businessId = DEMO.businesses.nairobi;
    const sales = new SalesClient(h.client, { taskQueue: h.taskQueue });
    const inputs = [
      saleInput({ options: { refundWindowDays: 1 } }),
      saleInput(),
      saleInput({ lines: [{ itemId: DEMO.items.milk, quantity: 3, unitPrice: 64.99 }] }),
    ];
    for (const input of inputs) expect((await sales.startAndAwaitReceipt(input)).signed).toBe(true);
    // The same till call again is answered from the signed sale: nothing more is counted.
    expect((await sales.startAndAwaitReceipt(inputs[1]!)).signed).toBe(true);
    const creditNote = invoiceNumber();
    await sales.refund(businessId, inputs[0]!.traderInvoiceNumber, {
      reason: '06',
      returnDate: '2026-11-28',
      traderInvoiceNumber: creditNote,
    });

    // The independent sum: the signed documents as the service keeps them.
    const ours = new Set([...inputs.map((i) => i.traderInvoiceNumber), creditNote]);
    const documents = (await h.sandbox.inspector.documents({ businessId })).filter((d) =>
      ours.has(d.sale.traderInvoiceNumber),
    );
    expect(documents).toHaveLength(4);
    const receipt = documents[0]!.sale.receipt!;
    const day = { businessId, scuId: receipt.scuId!, date: isoDateOf(receipt.scuDate)! };
    const expected: TaxBands = {};
    for (const d of documents) addBands(expected, taxBandsOf(d.sale.lines));

    const days = new FiscalDaysClient(h.client, { taskQueue: h.taskQueue });
    const [book] = await eventually(
      () => days.days(businessId, { scuId: day.scuId, date: day.date }),
      (found) => (found[0]?.receipts.NS ?? 0) + (found[0]?.receipts.NC ?? 0) >= 4,
      { what: 'the day book' },
    );
    expect(book!.receipts).toEqual({ NS: 3, NC: 1 });
    expect(book!.taxes).toEqual(expected);
    const numbers = documents.map((d) => d.sale.receipt!.receiptNumber!).sort((a, b) => a - b);
    expect(book!.numbering.all).toMatchObject({ first: numbers[0], last: numbers[3], missing: 0 });
    expect(book!.status).toBe('open');

    // A till that counted one sale more, a cent more tax on one letter, one sale never started, one not listed.
    const [letter] = Object.keys(expected);
    const tillTaxes = Object.fromEntries(
      Object.entries(expected).map(([l, b]) => [
        l,
        { taxable: b.taxable / 100, tax: (b.tax + (l === letter ? 1 : 0)) / 100, total: b.total / 100 },
      ]),
    );
    const neverStarted = invoiceNumber();
    const till = {
      ...day,
      receipts: { NS: 4, NC: 1 },
      taxes: tillTaxes,
      invoiceNumbers: [inputs[1]!.traderInvoiceNumber, inputs[2]!.traderInvoiceNumber, neverStarted],
    };
    const match = await eventually(
      () => days.matchTillClose(till),
      (m) => m.notOnTillCount === 1,
      { what: "visibility's signed sales of the day" },
    );
    expect(match.matched).toBe(false);
    expect(match.receipts).toEqual([{ label: 'NS', till: 4, authority: 3 }]);
    expect(match.taxes).toEqual([
      { letter, amount: 'tax', till: (expected[letter!]!.tax + 1) / 100, authority: expected[letter!]!.tax / 100 },
    ]);
    expect(match.notSigned).toEqual([{ traderInvoiceNumber: neverStarted, state: 'never_started', detail: '' }]);
    expect(match.notOnTill).toMatchObject([{ traderInvoiceNumber: inputs[0]!.traderInvoiceNumber, label: 'NS' }]);
    // A bad close is refused naming the field, before anything is sent.
    await expect(days.matchTillClose({ ...till, date: '28/11/2026' })).rejects.toThrow(/date/);

    // The same through the CLI: the table, the CSV, the till's close (exit 1: it differs), a bad close (exit 2).
    const at = ['--task-queue', h.taskQueue];
    const table = await runSalesCli(['day', businessId, '--scu', day.scuId, '--date', day.date, ...at]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`${day.date}  control unit ${day.scuId}`);
    expect(table.stdout).toContain('receipts: NS 3, NC 1');
    const all = Object.values(expected).reduce((sum, b) => sum + b.total, 0);
    expect(table.stdout).toMatch(new RegExp(`all\\s+[\\d.]+\\s+[\\d.]+\\s+${(all / 100).toFixed(2)}`));
    const csv = await runSalesCli(['day', businessId, '--date', day.date, '--csv', ...at]);
    expect(csv.code).toBe(0);
    expect(csv.stdout.split('\n')[0]).toBe(
      'date,business_id,scu_id,status,receipts_ns,receipts_nc,first,last,missing,tax_letter,taxable,tax,total',
    );
    expect(csv.stdout).toContain(`${day.date},${businessId},${day.scuId},open,3,1,`);
    const closeByCli = await runSalesCli(['till-close', '-', ...at], { stdin: JSON.stringify(till) });
    expect(closeByCli.code).toBe(1);
    expect(JSON.parse(closeByCli.stdout)).toMatchObject({ matched: false, notSignedCount: 1 });
    const bad = await runSalesCli(['till-close', '-', ...at], { stdin: JSON.stringify({ ...till, receipts: 3 }) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid till close: receipts');

    // Plain JSON from the Temporal CLI, as docs/fiscal-day.md shows it.
    const { path: temporal } = await resolveTemporalExecutable('temporal', { install: false });
    const byTemporalCli = await execFileAsync(temporal, [
      ...['workflow', 'update', 'execute', '--workflow-id', fiscalDayWorkflowId(h.taskQueue, day)],
      ...['--name', 'matchTillClose', '--input', JSON.stringify(till)],
      ...['--address', inject('temporalAddress'), '--namespace', inject('temporalNamespace'), '--output', 'json'],
    ]);
    expect(JSON.parse(byTemporalCli.stdout)).toMatchObject({
      result: { matched: false, notSigned: [{ traderInvoiceNumber: neverStarted, state: 'never_started' }] },
    });

    const handle = h.client.workflow.getHandle(fiscalDayWorkflowId(h.taskQueue, day));
    const closed = await handle.executeUpdate(closeFiscalDayUpdate);
    expect(closed).toMatchObject({ status: 'closed', receipts: { NS: 3, NC: 1 }, taxes: expected });
    const delivered = await eventually(
      async () =>
        (await readFile(sinkPath, 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { id: string; type: string; day: { taxes: TaxBands } }),
      (events) => events.some((e) => e.type === 'fiscal_day.closed'),
      { what: 'the close delivered' },
    );
    const closes = delivered.filter((e) => e.type === 'fiscal_day.closed');
    expect(closes).toHaveLength(1);
    expect(closes[0]!.id).toBe(`fiscal_day.${businessId}.${day.scuId}.${day.date}.closed`);
    expect(closes[0]!.day.taxes).toEqual(expected);
    // Three sales, a refund and four CLI processes: more than a test's default on a busy machine.
  }, 120_000);
});

describe('a day book that missed the entries sent after the answers', () => {
  it('counts those sales at its close from visibility and their own records, to the cent', async () => {
    const businessId = DEMO.businesses.mombasa;
    const sales = new SalesClient(h.client, { taskQueue: h.taskQueue });
    const lines = (quantity: number) => [{ itemId: DEMO.items.mombasaWater, quantity, unitPrice: 50 }];
    const inputs = [saleInput({ businessId, lines: lines(1) }), saleInput({ businessId, lines: lines(3) })];
    for (const input of inputs) expect((await sales.startAndAwaitReceipt(input)).signed).toBe(true);
    const ours = new Set(inputs.map((i) => i.traderInvoiceNumber));
    const documents = (await h.sandbox.inspector.documents({ businessId })).filter((d) =>
      ours.has(d.sale.traderInvoiceNumber),
    );
    const receipt = documents[0]!.sale.receipt!;
    const day = { businessId, scuId: receipt.scuId!, date: isoDateOf(receipt.scuDate)! };
    const expected: TaxBands = {};
    for (const d of documents) addBands(expected, taxBandsOf(d.sale.lines));
    const workflowId = fiscalDayWorkflowId(h.taskQueue, day);
    const days = new FiscalDaysClient(h.client, { taskQueue: h.taskQueue });
    await eventually(
      () => days.days(businessId, { scuId: day.scuId, date: day.date }),
      (found) => (found[0]?.receipts.NS ?? 0) >= 2,
      { what: 'the day book' },
    );
    // Every entry lost: the book started anew, empty, as if each sale's process died just after its till's answer.
    await h.client.workflow.getHandle(workflowId).terminate('the test loses its entries');
    await h.client.workflow.start(FISCAL_DAY_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: h.taskQueue,
      args: [{ ...day, settings: DEFAULT_FISCAL_DAY_SETTINGS }],
    });
    await eventually(
      async () =>
        (
          await h.client.workflow.count(
            `WorkflowType = 'saleWorkflow' AND FiscalDay = '${day.date}/${day.scuId}' AND BusinessId = '${businessId}'`,
          )
        ).count,
      (n) => n >= 2,
      { what: "visibility's signed sales of the day" },
    );

    const closed = await h.client.workflow.getHandle(workflowId).executeUpdate(closeFiscalDayUpdate);
    expect(closed).toMatchObject({ status: 'closed', receipts: { NS: 2 }, taxes: expected, amendments: 0 });
    const numbers = documents.map((d) => d.sale.receipt!.receiptNumber!).sort((a, b) => a - b);
    expect(closed.numbering.all).toMatchObject({ first: numbers[0], last: numbers[1] });
  });
});

describe('a document for a day whose book has ended', () => {
  it('starts no empty book: it is delivered by itself as an amendment, with the day as the book left it', async () => {
    const delivered: FiscalDayEvent[] = [];
    const activities = createFiscalDayActivities({
      temporal: { client: h.client },
      logger: pino({ level: 'silent' }),
      eventSink: {
        description: 'memory',
        deliver: async (e) => void delivered.push(e as FiscalDayEvent),
        close: async () => {},
      },
      fiscalDay: { ...DEFAULT_FISCAL_DAY_SETTINGS, keepOpen: '1 second' },
    });
    // A day long over: its book closes at once, keeps open a second, then ends.
    const key = {
      businessId: DEMO.businesses.nairobi,
      scuId: `KRACU-ENDED-${randomUUID().slice(0, 8)}`,
      date: '2020-01-01',
    };
    const entry = (n: number) => ({
      documentId: `doc_ended_${n}`,
      traderInvoiceNumber: `ENDED-${n}`,
      label: 'NS',
      receiptNumber: n,
      cuInvoiceNo: null,
      taxes: { B: { taxable: 8_621, tax: 1_379, total: 10_000 } },
    });
    const { workflowId } = await activities.enterFiscalDay({ ...key, entries: [entry(1)], taskQueue: h.taskQueue });
    const ended = await h.client.workflow.getHandle(workflowId).result();
    expect(ended).toMatchObject({ status: 'closed', receipts: { NS: 1 } });

    await activities.enterFiscalDay({ ...key, entries: [entry(2)], taskQueue: h.taskQueue });
    expect(delivered).toEqual([
      {
        id: `fiscal_day.${key.businessId}.${key.scuId}.2020-01-01.late.doc_ended_2`,
        type: 'fiscal_day.amended',
        businessId: key.businessId,
        day: ended,
        amendment: { number: 0, receipts: { NS: 1 }, taxes: entry(2).taxes },
      },
    ]);
    // Nothing started again: the ended run is still the workflow's last.
    expect((await h.client.workflow.getHandle(workflowId).describe()).status.name).toBe('COMPLETED');
  });
});
