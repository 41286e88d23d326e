/**
 * The sale input's checks run inside Temporal's workflow sandbox, on a real worker of the run's Temporal server:
 * the sale workflow can validate a plain-JSON start with the very schemas the client and the docs use. The schemas'
 * module is shared between workflows as the worker shares it, so every check after the first reuses them.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type {
  checkAwaitReceiptInWorkflow,
  checkSaleInputInWorkflow,
  saleInputDifferencesInWorkflow,
} from '../fixtures/workflows/sale-input-check.js';
import { useTestWorker } from '../helpers/test-worker.js';
import type { SaleInput } from '../../src/contracts/sale.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/sale-input-check.ts', import.meta.url));

const sale: SaleInput = {
  businessId: 'biz_demo_nairobi',
  traderInvoiceNumber: 'INV-1',
  saleDate: '2025-01-15',
  customer: { name: 'Wanjiku', email: 'wanjiku@example.co.ke' },
  lines: [{ itemId: 'ITEM-1', quantity: 2, unitPrice: 150.5 }],
};

describe('sale input checks inside the workflow sandbox', () => {
  const { client, taskQueue } = useTestWorker(workflowsPath, 'sale-input', {
    preloadModules: workflowSources().preloadModules,
  });
  const checkSale = (input: unknown) =>
    client.workflow.execute<typeof checkSaleInputInWorkflow>('checkSaleInputInWorkflow', {
      taskQueue,
      workflowId: `sale-input-${randomUUID()}`,
      args: [input],
    });
  const checkAwaitReceipt = (request: unknown) =>
    client.workflow.execute<typeof checkAwaitReceiptInWorkflow>('checkAwaitReceiptInWorkflow', {
      taskQueue,
      workflowId: `sale-input-${randomUUID()}`,
      args: [request],
    });
  const differences = (started: SaleInput, asked: SaleInput) =>
    client.workflow.execute<typeof saleInputDifferencesInWorkflow>('saleInputDifferencesInWorkflow', {
      taskQueue,
      workflowId: `sale-input-${randomUUID()}`,
      args: [started, asked],
    });

  it('accepts a valid sale input', async () => {
    await expect(checkSale(sale)).resolves.toEqual({ ok: true, message: null, fields: [] });
  });

  it('refuses a sale without lines, naming the field', async () => {
    const { lines: _lines, ...withoutLines } = sale;
    await expect(checkSale(withoutLines)).resolves.toEqual({
      ok: false,
      message: 'invalid sale input: lines is required',
      fields: ['lines'],
    });
  });

  it('refuses a line whose amount is out of bounds, and an unknown field first', async () => {
    const input = { ...sale, lines: [{ itemId: 'ITEM-1', quantity: 1_000_000, unitPrice: 1_000_000_000, qty: 1 }] };
    await expect(checkSale(input)).resolves.toEqual({
      ok: false,
      message: 'invalid sale input: lines[0].qty is not a known field (and 1 more problem)',
      fields: ['lines[0].qty', 'lines[0]'],
    });
  });

  it('refuses an awaitReceipt wait over 10 minutes', async () => {
    await expect(checkAwaitReceipt({ wait: '11 minutes', input: sale })).resolves.toEqual({
      ok: false,
      message: 'invalid awaitReceipt request: wait must be at most 10 minutes',
      fields: ['wait'],
    });
  });

  it('names the fields in which two inputs differ', async () => {
    const asked = {
      ...sale,
      customer: { email: 'wanjiku@example.co.ke', name: 'Achieng' },
      lines: [{ itemId: 'ITEM-1', quantity: 3, unitPrice: 150.5 }],
    };
    await expect(differences(sale, asked)).resolves.toEqual(['customer.name', 'lines[0].quantity']);
  });
});
