/**
 * A caller in another language, for real: the Temporal Python SDK (test/python/till_sale.py, the venv from
 * test/python/requirements.txt) drives a sale end to end against our worker process on the run's dev server, as
 * docs/starting-sales.md tells such a caller to: the input checked against the published JSON Schema, the customer
 * encrypted with the workers' keys by its own codec (test/python/sale_codec.py), one update-with-start of
 * `awaitReceipt` for the receipt values, the same call again, a conflicting one, the `refund` update, the result.
 * Then, without any codec, the history is read raw: no customer field appears in it; our codec server decodes it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import { BusinessId, TraderInvoiceNumber } from '../../src/contracts/search-attributes.js';
import type { ReceiptAnswer, RefundRequest, RefundResult, SaleInput, SaleState } from '../../src/contracts/sale.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { refundWorkflowId } from '../../src/contracts/refund.js';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';
import { eventually } from '../helpers/eventually.js';
import { closeTestEnv } from '../helpers/temporal.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { startEncryptedSaleStack, type EncryptedSaleStack } from './encrypted-sale-stack.js';
import { jsonAnswer, pythonForCaller, runPython } from './python.js';

const SCHEMA = fileURLToPath(new URL('../../docs/schemas/sale-input.schema.json', import.meta.url));
const HistoryProto = proto.temporal.api.history.v1.History;
const execFileAsync = promisify(execFile);

interface CallerFailure {
  error: string;
  type: string | null;
  nonRetryable: boolean | null;
  message: string;
  details: unknown[];
}

interface CallerAnswer {
  workflowId: string;
  schema: string | null;
  receipt: ReceiptAnswer;
  again: ReceiptAnswer;
  conflict: CallerFailure & { unexpectedAnswer?: ReceiptAnswer };
  invalid: CallerFailure & { unexpectedAnswer?: ReceiptAnswer };
  corrected: { error?: string; answer?: ReceiptAnswer };
  refund: RefundResult;
  refundAgain: RefundResult;
  refundState: SaleState;
  result: SaleState;
  afterClose: { error?: string; unexpectedAnswer?: ReceiptAnswer };
  askedAgain: ReceiptAnswer[];
  failed?: CallerFailure;
}

const customer = {
  name: 'Wambui Njeri-Otieno',
  pin: 'A009876543K',
  phone: '+254722987654',
  email: 'wambui.njeri@example.co.ke',
};
const keyId = '2026-09';
const payloadKeys = `${keyId}:${randomBytes(32).toString('base64')}`;

let stack: EncryptedSaleStack;

beforeAll(async () => {
  await pythonForCaller(); // a missing Python fails here, with the reason
  stack = await startEncryptedSaleStack({ address: inject('temporalAddress'), payloadKeys });
}, 300_000);

afterAll(async () => {
  await stack?.close();
  await closeTestEnv();
});

function text(bytes: Uint8Array | null | undefined): string {
  return Buffer.from(bytes ?? new Uint8Array()).toString();
}

function saleFor(prefix: string): SaleInput {
  return {
    businessId: DEMO.businesses.nairobi,
    traderInvoiceNumber: invoiceNumber(prefix),
    saleDate: '2026-11-21',
    customer,
    lines: [
      { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
      { itemId: DEMO.items.milk, quantity: 1, unitPrice: 65 },
    ],
  };
}

/** The search attributes only the start sets: a search by business or invoice number finds the sale. */
/** Started as the TypeScript client starts a sale: findable at once, its tasks at a till's priority. */
async function expectStartedLikeTheClient(workflowId: string, sale: SaleInput) {
  const handle = stack.client.workflow.getHandle(workflowId);
  const { typedSearchAttributes } = await handle.describe();
  expect(typedSearchAttributes.get(BusinessId)).toBe(sale.businessId);
  expect(typedSearchAttributes.get(TraderInvoiceNumber)).toBe(sale.traderInvoiceNumber);
  const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
  expect(started?.priority).toMatchObject({ priorityKey: PRIORITY.signing, fairnessKey: sale.businessId });
}

/** Every customer field absent from the raw bytes of the sale's history (read without any codec). */
async function expectNoCustomerInHistory(workflowId: string) {
  const history = await stack.rawClient.workflow.getHandle(workflowId).fetchHistory();
  const raw = Buffer.from(HistoryProto.encode(history).finish());
  for (const value of Object.values(customer)) expect(raw.includes(value), value).toBe(false);
  return history;
}

describe('a Python till (Temporal Python SDK) drives an encrypted sale end to end', () => {
  it('gets the receipt from one update-with-start, is refused a conflicting input, refunds; the history holds no customer data', async () => {
    const sale = saleFor('PY-');
    const refund: RefundRequest = {
      reason: '06',
      returnDate: '2026-11-22',
      traderInvoiceNumber: invoiceNumber('PYCN-'),
    };
    // What a caller that skipped the schema might send: no lines.
    const { lines: _lines, ...invalidSale } = { ...sale, traderInvoiceNumber: invoiceNumber('PYBAD-') };

    const run = await runPython('till_sale.py', [], {
      stdin: JSON.stringify({ sale, refund, invalidSale }),
      env: {
        TEMPORAL_ADDRESS: stack.address,
        TEMPORAL_NAMESPACE: stack.namespace,
        SALES_TASK_QUEUE: stack.taskQueue,
        PAYLOAD_KEYS: payloadKeys,
        SALE_INPUT_SCHEMA: SCHEMA,
      },
      timeoutMs: 120_000,
    });
    const out = jsonAnswer<CallerAnswer>(run);
    expect(out.failed, `${run.stdout}\n${run.stderr}`).toBeUndefined();
    expect(run.code).toBe(0);
    expect(out.schema).toBe(SCHEMA);
    expect(out.workflowId).toBe(saleWorkflowId(sale.businessId, sale.traderInvoiceNumber));

    // One call: the sale started and its receipt values came back in the update's answer.
    expect(out.receipt.signed).toBe(true);
    expect(out.receipt.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    expect(out.receipt.receipt).toMatchObject({
      receiptNumber: expect.any(Number),
      signature: expect.any(String),
      scuId: expect.any(String),
    });
    expect(out.receipt.state.sale?.totals.total).toBe(565);
    // The same call again answers for the same sale; another input under the same number is refused, fields named.
    expect(out.again.signed).toBe(true);
    expect(out.again.receipt).toEqual(out.receipt.receipt);
    expect(out.conflict.unexpectedAnswer).toBeUndefined();
    // Refused by the workflow's validator while it runs, or against its started input once closed.
    expect(['WorkflowUpdateFailedError', 'SaleInputConflict']).toContain(out.conflict.error);
    expect(out.conflict.type).toBe('sale_input_conflict');
    expect(out.conflict.message).toContain('lines[0].quantity');
    expect(out.conflict.message).toContain('customer.name');
    expect(out.conflict.message).not.toContain(customer.name);
    expect(out.conflict.details).toEqual([{ fields: expect.arrayContaining(['lines[0].quantity', 'customer.name']) }]);
    expect(out.invalid.unexpectedAnswer).toBeUndefined();
    expect(out.invalid).toMatchObject({
      error: 'WorkflowUpdateFailedError',
      type: 'invalid_input',
      nonRetryable: true,
    });
    expect(out.invalid.message).toContain('lines is required');
    // The refused input ended that sale's execution at once (nothing was sent), and reject-duplicate spends its
    // invoice number: the corrected input under the same number is not started. Validate against the schema first.
    const invalidHandle = stack.client.workflow.getHandle(
      saleWorkflowId(invalidSale.businessId, invalidSale.traderInvoiceNumber),
    );
    expect((await invalidHandle.describe()).status.name).toBe('FAILED');
    expect(out.corrected).toEqual({ error: 'WorkflowAlreadyStartedError' });
    expect(await stack.sandbox.inspector.documents({ traderInvoiceNumber: invalidSale.traderInvoiceNumber })).toEqual(
      [],
    );

    // The sale closed once signed; its refund is a workflow of its own, answered again with the same credit note.
    expect(out.result.step).toBe('completed');
    expect(out.result.creditNote).toBeNull();
    expect(out.refund.creditNote).toMatchObject({
      type: 'credit_note',
      status: 'completed',
      traderInvoiceNumber: refund.traderInvoiceNumber,
    });
    expect(out.refund.creditNote.receipt).toMatchObject({
      receiptLabel: 'NC',
      originalCuInvoiceNo: out.receipt.receipt?.cuInvoiceNo,
    });
    expect(out.refund.creditNote.totals.total).toBe(-565);
    expect(out.refundAgain.creditNote.id).toBe(out.refund.creditNote.id);
    expect(out.refundState).toMatchObject({ step: 'completed', creditNote: { id: out.refund.creditNote.id } });
    // Asked again after the sale closed: not started again, and the same receipt from its result, twice.
    expect(out.afterClose).toEqual({ error: 'WorkflowAlreadyStartedError' });
    for (const asked of out.askedAgain) {
      expect(asked.signed).toBe(true);
      expect(asked.receipt).toEqual(out.receipt.receipt);
    }

    // The service got one sale and one credit note, with the customer the worker decrypted.
    const [filed, ...more] = await stack.sandbox.inspector.documents({ traderInvoiceNumber: sale.traderInvoiceNumber });
    expect(more).toEqual([]);
    expect(filed?.sale.customer).toMatchObject({ name: customer.name, pin: customer.pin });
    expect(await stack.sandbox.inspector.documents({ traderInvoiceNumber: refund.traderInvoiceNumber })).toHaveLength(
      1,
    );

    // Raw, without the codec: not one customer field anywhere in the history's bytes.
    const history = await expectNoCustomerInHistory(out.workflowId);
    await expectStartedLikeTheClient(out.workflowId, sale);
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(text(started?.metadata?.encoding)).toBe('binary/encrypted');
    expect(text(started?.metadata?.['encryption-key-id'])).toBe(keyId);

    // Our codec server (the UI's and the CLI's) shows what Python encrypted.
    const response = await fetch(`${stack.codecServer.url}/decode`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Namespace': stack.namespace,
        Authorization: `Bearer ${stack.codecToken}`,
      },
      body: JSON.stringify({
        payloads: [
          {
            metadata: {
              encoding: Buffer.from(started!.metadata!.encoding!).toString('base64'),
              'encryption-key-id': Buffer.from(keyId).toString('base64'),
            },
            data: Buffer.from(started!.data!).toString('base64'),
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    const shown = ((await response.json()) as { payloads: Array<{ data: string }> }).payloads[0]!;
    expect(JSON.parse(Buffer.from(shown.data, 'base64').toString())).toEqual(sale);
  }, 180_000);
});

describe('the Temporal CLI through the codec server (docs/starting-sales.md)', () => {
  it('execute-update-with-start with --codec-endpoint: the receipt in one command, the history encrypted, query and refund decoded', async () => {
    const { path: temporal } = await resolveTemporalExecutable('temporal', { install: false });
    const sale = saleFor('CLI-');
    const workflowId = saleWorkflowId(sale.businessId, sale.traderInvoiceNumber);
    const common = [
      '--address',
      stack.address,
      '--namespace',
      stack.namespace,
      '--codec-endpoint',
      stack.codecServer.url,
      '--codec-auth',
      `Bearer ${stack.codecToken}`,
      '--output',
      'json',
    ];
    const cli = async (args: string[]) =>
      JSON.parse((await execFileAsync(temporal, [...args, ...common], { env: cliEnv() })).stdout) as Record<
        string,
        unknown
      >;

    const started = await cli([
      'workflow',
      'execute-update-with-start',
      '--type',
      'saleWorkflow',
      '--task-queue',
      stack.taskQueue,
      '--workflow-id',
      workflowId,
      '--id-conflict-policy',
      'UseExisting',
      '--id-reuse-policy',
      'RejectDuplicate',
      '--search-attribute',
      `BusinessId=${JSON.stringify(sale.businessId)}`,
      '--search-attribute',
      `TraderInvoiceNumber=${JSON.stringify(sale.traderInvoiceNumber)}`,
      '--search-attribute',
      'FiscalStatus="pending"',
      '--search-attribute',
      'NeedsAttention=false',
      '--priority-key',
      String(PRIORITY.signing),
      '--fairness-key',
      sale.businessId,
      '--input',
      JSON.stringify(sale),
      '--update-name',
      'awaitReceipt',
      '--update-input',
      JSON.stringify({ wait: '30 seconds', input: sale }),
    ]);
    const answer = started.updateResult as ReceiptAnswer;
    expect(answer.signed, JSON.stringify(started)).toBe(true);
    expect(answer.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    await expectNoCustomerInHistory(workflowId);
    await expectStartedLikeTheClient(workflowId, sale);

    // The sale closes once its stock is handed over; its state is still read by a query.
    const step = async () =>
      (
        (await cli(['workflow', 'query', '--workflow-id', workflowId, '--name', 'getState'])).queryResult as SaleState[]
      )[0]?.step;
    await eventually(step, (s) => s === 'completed', { timeoutMs: 30_000, what: 'the sale closed' });

    // The refund, one command: update-with-start of its own workflow, whose id the sale's names.
    const refund: RefundRequest = {
      reason: '01',
      returnDate: '2026-11-22',
      traderInvoiceNumber: invoiceNumber('CLICN-'),
    };
    const refundArgs = [
      'workflow',
      'execute-update-with-start',
      '--type',
      'refundWorkflow',
      '--task-queue',
      stack.taskQueue,
      '--workflow-id',
      refundWorkflowId(sale.businessId, sale.traderInvoiceNumber),
      '--id-conflict-policy',
      'UseExisting',
      '--id-reuse-policy',
      'AllowDuplicateFailedOnly',
      '--input',
      JSON.stringify({ businessId: sale.businessId, traderInvoiceNumber: sale.traderInvoiceNumber, request: refund }),
      '--update-name',
      'refund',
      '--update-id',
      `refund:${refund.traderInvoiceNumber}`,
      '--update-input',
      JSON.stringify(refund),
    ];
    const refunded = await cli(refundArgs);
    expect((refunded.updateResult as RefundResult).creditNote).toMatchObject({
      status: 'completed',
      traderInvoiceNumber: refund.traderInvoiceNumber,
    });
  }, 120_000);
});

/** No temporal.toml of the machine's user: the flags alone say where and how. */
function cliEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' };
}
