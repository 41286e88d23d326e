import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { SaleInputConflictError, SaleInputError, SaleOperationError, SalesClient } from '../../src/client/index.js';
import type { SaleInput } from '../../src/client/index.js';
import {
  BusinessId,
  FiscalStatus,
  NeedsAttention,
  TraderInvoiceNumber,
} from '../../src/contracts/search-attributes.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { FIRST_BRANCH, stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { createRefundActivities } from '../../activities/refund.js';
import { refundWorkflowId } from '../../src/contracts/refund.js';
import { createDataConverter } from '../../src/codec/data-converter.js';
import { newKey, ring } from '../codec/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { useTestWorker } from '../helpers/test-worker.js';

// The worker runs a stand-in 'saleWorkflow' (see the fixture): these tests cover the client API only.
const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/fake-sale.ts', import.meta.url));

const { client, taskQueue } = useTestWorker(workflowsPath, 'sales-client', {}, (temporal) =>
  createRefundActivities({ temporal: { client: temporal } }),
);
const sales = new SalesClient(client, { taskQueue });

/** A sale of its own business, so tests never share a workflow id (even on a long-lived server). */
function sale(itemIds: string[] = ['ITEM-1'], overrides: Partial<SaleInput> = {}): SaleInput {
  return {
    businessId: `biz-${randomUUID()}`,
    traderInvoiceNumber: 'INV-1',
    saleDate: '2025-01-15',
    lines: itemIds.map((itemId, i) => ({ itemId, quantity: i + 1, unitPrice: 100.5, description: `line ${i + 1}` })),
    ...overrides,
  };
}

/** Run ids of every execution with this workflow id, once visibility has caught up with `expected` of them. */
async function executions(workflowId: string, expected: number): Promise<string[]> {
  const list = async () => {
    const runIds: string[] = [];
    for await (const info of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runIds.push(info.runId);
    return runIds;
  };
  await eventually(list, (runIds) => runIds.length >= expected, {
    timeoutMs: 10_000,
    intervalMs: 200,
    what: `${expected} executions`,
  });
  // Give a second execution, had one been started, the same time to show up.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return list();
}

async function rejection(promise: Promise<unknown>): Promise<SaleOperationError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SaleOperationError);
  return err as SaleOperationError;
}

describe('startSale', () => {
  it('starts one execution per sale: a second start finds the running one', async () => {
    const input = sale();
    const first = await sales.startSale(input);
    const second = await sales.startSale(input);

    expect(first).toEqual({
      workflowId: saleWorkflowId(input.businessId, 'INV-1'),
      runId: expect.any(String),
      started: true,
    });
    expect(second).toEqual({ ...first, started: false });
    expect(await executions(first.workflowId, 1)).toEqual([first.runId]);
  });

  it('lets exactly one of two concurrent starts start the sale', async () => {
    const input = sale();
    const results = await Promise.all([sales.startSale(input), sales.startSale(input)]);

    expect(results.filter((r) => r.started)).toHaveLength(1);
    expect(results[0]!.runId).toBe(results[1]!.runId);
    expect(await executions(results[0]!.workflowId, 1)).toHaveLength(1);
  });

  it('never starts a finished sale again: the existing execution is returned', async () => {
    const input = sale();
    const first = await sales.startSale(input);
    // Signed, its stock handed over: the sale has closed by itself.
    await client.workflow.getHandle(first.workflowId).result();

    const again = await sales.startSale(input);

    expect(again).toEqual({ workflowId: first.workflowId, runId: first.runId, started: false });
    expect(await executions(first.workflowId, 1)).toEqual([first.runId]);
  });

  it('sets the search attributes, summary and details operators search and read, and a till’s priority', async () => {
    const input = sale(['SUGAR-1KG', 'MILK|500ML'], { traderInvoiceNumber: 'INV-42' });
    const { workflowId } = await sales.startSale(input);

    const description = await client.workflow.getHandle(workflowId).describe();
    expect(description.typedSearchAttributes.get(BusinessId)).toBe(input.businessId);
    expect(description.typedSearchAttributes.get(TraderInvoiceNumber)).toBe('INV-42');
    expect(description.typedSearchAttributes.get(FiscalStatus)).toBe('pending');
    expect(description.typedSearchAttributes.get(NeedsAttention)).toBe(false);
    // Its workflow tasks go ahead of background work (an import's, a registration's), fairly between businesses.
    const started = (await client.workflow.getHandle(workflowId).fetchHistory()).events?.[0];
    expect(started?.workflowExecutionStartedEventAttributes?.priority).toMatchObject({
      priorityKey: PRIORITY.signing,
      fairnessKey: input.businessId,
    });
    // 1 × 100.50 + 2 × 100.50
    expect(await description.staticSummary()).toBe(
      `Sale INV-42 · business ${input.businessId} · 2 lines · total KES 301.50`,
    );
    const details = await description.staticDetails();
    expect(details).toContain('| 1 | SUGAR-1KG | line 1 | 1 | 100.50 | 100.50 |');
    expect(details).toContain('| 2 | MILK\\|500ML | line 2 | 2 | 100.50 | 201.00 |');

    // Visibility is eventually consistent: a server on PostgreSQL lists a new workflow a moment after its start.
    const list = async () => {
      const found: string[] = [];
      for await (const info of client.workflow.list({
        query: `BusinessId = '${input.businessId}' AND TraderInvoiceNumber = 'INV-42'`,
      })) {
        found.push(info.workflowId);
      }
      return found;
    };
    expect(
      await eventually(list, (found) => found.length > 0, {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: 'the sale listed by its search attributes',
      }),
    ).toEqual([workflowId]);
  });

  it('starts a sale of 500 lines: the details stay within the server limits', async () => {
    const input = sale(Array.from({ length: 500 }, (_, i) => `ITEM-WITH-A-LONGER-ID-${i}`));
    const result = await sales.startSale(input);

    expect(result.started).toBe(true);
    const details = await (await client.workflow.getHandle(result.workflowId).describe()).staticDetails();
    expect(details).toMatch(/… and \d+ more line\(s\)/);
  });

  it('refuses a repeated start with another input: a conflict naming the fields, never their values', async () => {
    const input = sale(['ITEM-1', 'ITEM-2'], { customer: { name: 'Wanjiru Kamau', pin: 'A123456789B' } });
    const { workflowId } = await sales.startSale(input);
    const other: SaleInput = {
      ...input,
      customer: { name: 'Otieno Odhiambo', pin: 'A123456789B' },
      lines: [input.lines[0]!, { ...input.lines[1]!, quantity: 4321 }],
    };

    const err = await sales.startSale(other).then(
      (answer) => answer,
      (e: unknown) => e,
    );

    expect(err).toBeInstanceOf(SaleInputConflictError);
    expect(err).toMatchObject({ workflowId, fields: ['customer.name', 'lines[1].quantity'] });
    const { message } = err as Error;
    expect(message).toContain('customer.name, lines[1].quantity');
    for (const value of ['Wanjiru', 'Otieno', '4321']) expect(message).not.toContain(value);
    // The same input again is still the idempotent start it always was.
    expect(await sales.startSale(input)).toMatchObject({ workflowId, started: false });
    expect(await executions(workflowId, 1)).toHaveLength(1);
  });

  it('refuses a conflicting start of a finished sale too: its input is read from its history', async () => {
    const input = sale();
    const first = await sales.startSale(input);
    await client.workflow.getHandle(first.workflowId).result();

    const err = await sales.startSale({ ...input, saleDate: '2025-01-16' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(SaleInputConflictError);
    expect(err).toMatchObject({ workflowId: first.workflowId, fields: ['saleDate'] });
  });

  it('reads an encrypted start with its codec, with no worker running the sale', async () => {
    const encrypted = new Client({
      connection: client.connection,
      namespace: client.options.namespace,
      dataConverter: createDataConverter(ring([['k1', newKey()]])),
    });
    // A task queue no worker polls: the sale only has its start event.
    const idle = new SalesClient(encrypted, { taskQueue: `${taskQueue}-idle` });
    const input = sale(['ITEM-1'], { customer: { name: 'Wanjiru Kamau', email: 'wanjiru@example.com' } });
    const { workflowId } = await idle.startSale(input);
    try {
      const [started] = (await encrypted.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const stored = new TextDecoder().decode(
        started?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data ?? undefined,
      );
      expect(stored).not.toContain('Wanjiru');

      expect(await idle.startSale(input)).toMatchObject({ started: false });
      const err = await idle
        .startSale({ ...input, customer: { ...input.customer, email: 'other@example.com' } })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'SaleInputConflictError', fields: ['customer.email'] });
    } finally {
      await encrypted.workflow.getHandle(workflowId).terminate('test done');
    }
  });

  it('refuses bad input naming the field, and starts nothing', async () => {
    const input = sale();
    const bad = { ...input, lines: [{ itemId: 'ITEM-1', quantity: 0, unitPrice: 1 }] };

    const err = await sales.startSale(bad).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(SaleInputError);
    expect((err as SaleInputError).field).toBe('lines[0].quantity');
    expect((err as Error).message).toBe('invalid sale input: lines[0].quantity must be more than 0');
    await expect(
      client.workflow.getHandle(saleWorkflowId(input.businessId, 'INV-1')).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});

describe('operations on a sale', () => {
  it('reads the whole state, of a closed sale too', async () => {
    const input = sale(['ITEM-1']);
    const { workflowId } = await sales.startSale(input);
    await client.workflow.getHandle(workflowId).result();

    const state = await sales.getState(input.businessId, 'INV-1');

    expect(state).toMatchObject({ step: 'completed', businessId: input.businessId, traderInvoiceNumber: 'INV-1' });
    // Its lines are with the branch's stock ledger, named in its state.
    expect(state.stockMovements).toEqual([
      expect.objectContaining({
        status: 'handed_over',
        ledger: stockLedgerWorkflowId(taskQueue, input.businessId, FIRST_BRANCH),
      }),
    ]);
  });

  it('refunds once through the refund workflow: the same refund again returns the first answer, another is refused', async () => {
    const input = sale();
    await sales.startSale(input);
    const request = { reason: '02', returnDate: '2025-01-20', traderInvoiceNumber: 'CN-7', restock: false };

    // Sent while the sale may still be closing: the refund waits for its signed record.
    const first = await sales.refund(input.businessId, 'INV-1', request);
    const repeated = await sales.refund(input.businessId, 'INV-1', request);
    const fresh = await sales.refund(input.businessId, 'INV-1', request, { updateId: 'another-update-id' });
    const other = await rejection(sales.refund(input.businessId, 'INV-1', { ...request, traderInvoiceNumber: 'CN-8' }));

    expect(first.creditNote.traderInvoiceNumber).toBe('CN-7');
    expect(repeated).toEqual(first);
    expect(fresh).toEqual(first);
    expect(other.failure).toBe('rejected');
    expect(other.message).toContain('already refunded with another request (traderInvoiceNumber differs)');
    const refundId = refundWorkflowId(input.businessId, 'INV-1');
    expect(await executions(refundId, 1)).toHaveLength(1);
  });

  it('refunds a sale that keeps its refund window open through that sale’s own refund update', async () => {
    const input = sale(['open-window-1']);
    const { workflowId } = await sales.startSale(input);
    await expect
      .poll(async () => (await sales.getState(input.businessId, 'INV-1')).sale, { timeout: 5_000 })
      .not.toBeNull();

    const request = { reason: '01', returnDate: '2025-01-16', traderInvoiceNumber: 'CN-3', saleId: 'ignored' };
    const result = await sales.refund(input.businessId, 'INV-1', request);

    expect(result.creditNote.traderInvoiceNumber).toBe('CN-3');
    expect(((await client.workflow.getHandle(workflowId).result()) as { step: string }).step).toBe('completed');
    // The refund workflow said why it did not file, and filed nothing.
    const refund = await client.workflow.getHandle(refundWorkflowId(input.businessId, 'INV-1')).describe();
    expect(refund.status.name).toBe('FAILED');
  });

  it("surfaces the workflow's refusal of an update as a SaleOperationError with its reason", async () => {
    const input = sale(['rejected-1']);
    await sales.startSale(input);

    const refused = await rejection(
      sales.refund(input.businessId, 'INV-1', { reason: '01', returnDate: '2025-01-16', traderInvoiceNumber: 'CN-1' }),
    );
    expect(refused).toMatchObject({ operation: 'refund', failure: 'rejected', updateId: 'refund:CN-1' });
    expect(refused.message).toBe(
      `refund of ${refundWorkflowId(input.businessId, 'INV-1')} was refused: ` +
        'the sale is not signed (step parked, run running)',
    );

    const notWaiting = await rejection(sales.itemFixed(input.businessId, 'INV-1', 'ITEM-9'));
    expect(notWaiting.message).toContain('item ITEM-9 is not waiting to be fixed');

    // A signed sale has closed: a retry reaches no running execution.
    const signed = sale();
    const { workflowId } = await sales.startSale(signed);
    await client.workflow.getHandle(workflowId).result();
    const { history } = await sales.getState(signed.businessId, 'INV-1');
    const noRetry = await rejection(sales.retry(signed.businessId, 'INV-1'));
    expect(noRetry).toMatchObject({ failure: 'not_found', updateId: `retry:${history.length}@${history.at(-1)!.at}` });
  });

  it('retries once per situation: a second retry while the first runs acts once, a later one acts again', async () => {
    const input = sale(['rejected-1']);
    await sales.startSale(input);

    const first = sales.retry(input.businessId, 'INV-1');
    // The stand-in's retry takes a second, and its history does not move meanwhile: the same situation.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [a, b] = await Promise.all([first, sales.retry(input.businessId, 'INV-1')]);
    expect(a.submissions).toBe(2);
    expect(b.submissions).toBe(2);

    const later = await sales.retry(input.businessId, 'INV-1');
    expect(later.submissions).toBe(3);
    expect((await sales.getState(input.businessId, 'INV-1')).submissions).toBe(3);
  });

  it('uses a caller-chosen update id: the same id twice acts once', async () => {
    const input = sale(['rejected-1']);
    await sales.startSale(input);

    await sales.retry(input.businessId, 'INV-1', { updateId: 'console-request-1' });
    const again = await sales.retry(input.businessId, 'INV-1', { updateId: 'console-request-1' });

    expect(again.submissions).toBe(2);
  });

  it('passes item fixes to the workflow', async () => {
    const fix = sale(['needs-fix-A', 'needs-fix-B']);
    await sales.startSale(fix);
    expect((await sales.itemFixed(fix.businessId, 'INV-1', 'needs-fix-A')).step).toBe('parked');
    expect((await sales.itemFixed(fix.businessId, 'INV-1', 'needs-fix-B')).step).toBe('completed');
  });

  it('cancels a parked sale, which closes it', async () => {
    const input = sale(['rejected-1']);
    const { workflowId } = await sales.startSale(input);

    const state = await sales.cancel(input.businessId, 'INV-1', 'customer walked away');

    expect(state.step).toBe('cancelled');
    expect(state.history.at(-1)?.event).toBe('cancelled: customer walked away');
    expect((await client.workflow.getHandle(workflowId).result()) as unknown).toMatchObject({ step: 'cancelled' });
  });

  it('reports an unknown sale as not found', async () => {
    const missing = await rejection(sales.getState(`biz-${randomUUID()}`, 'INV-404'));
    expect(missing.failure).toBe('not_found');

    const input = sale();
    const { workflowId } = await sales.startSale(input);
    await client.workflow.getHandle(workflowId).result();
    const closed = await rejection(sales.cancel(input.businessId, 'INV-1', 'too late'));
    expect(closed.failure).toBe('not_found');
  });

  it('refuses bad operation input before sending anything', async () => {
    await expect(sales.getState('biz:1', 'INV-1')).rejects.toThrow(
      "invalid sale reference: businessId must not contain ':'",
    );
    await expect(sales.cancel('biz-1', 'INV-1', '  ')).rejects.toThrow(
      'invalid cancel request: reason must not be empty',
    );
    await expect(
      sales.refund('biz-1', 'INV-1', { reason: '07', returnDate: '2025-01-16', traderInvoiceNumber: 'CN-1' }),
    ).rejects.toThrow('invalid refund request: reason must be one of 01, 02, 03, 04, 05, 06');
    await expect(sales.itemFixed('biz-1', 'x'.repeat(51), 'ITEM-1')).rejects.toBeInstanceOf(SaleInputError);
  });
});
