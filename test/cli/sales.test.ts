import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { createRefundActivities } from '../../activities/refund.js';
import { useTestWorker } from '../helpers/test-worker.js';
import { runSalesCli } from '../helpers/run-cli.js';

// The worker runs the stand-in 'saleWorkflow': this file tests the CLI, not the sale process.
const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/fake-sale.ts', import.meta.url));

const cli = runSalesCli;

function sale(itemId = 'ITEM-1') {
  return {
    businessId: `biz-${randomUUID()}`,
    traderInvoiceNumber: 'INV-1',
    saleDate: '2025-01-15',
    lines: [{ itemId, quantity: 1, unitPrice: 10 }],
  };
}

const { client, taskQueue } = useTestWorker(workflowsPath, 'sales-cli', {}, (temporal) =>
  createRefundActivities({ temporal: { client: temporal } }),
);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sales-cli-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm run sales', () => {
  it('refuses a bad sale with exit 2 naming the field, and starts nothing', async () => {
    const input = { ...sale(), lines: [{ itemId: 'ITEM-1', quantity: 1, unitPrice: -3 }] };

    const result = await cli(['start', '-', '--task-queue', taskQueue], { stdin: JSON.stringify(input) });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid sale input: lines[0].unitPrice must be 0 or more');
    expect(result.stdout).toBe('');
    await expect(
      client.workflow.getHandle(saleWorkflowId(input.businessId, 'INV-1')).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('validates before connecting: bad input is exit 2 even with Temporal unreachable', async () => {
    const file = path.join(dir, 'typo.json');
    await writeFile(file, JSON.stringify({ ...sale(), saleDat: '2025-01-15' }));

    const result = await cli(['start', file], { address: '127.0.0.1:1' });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid sale input: saleDat is not a known field');
  });

  it('refuses JSON that does not parse, and a wrong command line, with exit 2', async () => {
    const broken = await cli(['start', '-'], { stdin: '{"businessId": ' });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('the sale in standard input is not valid JSON');

    const arity = await cli(['cancel', 'biz-1', 'INV-1']);
    expect(arity.code).toBe(2);
    expect(arity.stderr).toContain('cancel takes 3 argument(s): cancel <businessId> <tin> <reason>');
  });

  // Six CLI processes in a row: give it more than the default 30 s on a loaded machine.
  it('starts a sale, reads its state and operates it, printing JSON', { timeout: 90_000 }, async () => {
    const input = sale('rejected-1');
    const file = path.join(dir, 'sale.json');
    await writeFile(file, JSON.stringify(input));

    const started = await cli(['start', file, '--task-queue', taskQueue]);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({
      workflowId: saleWorkflowId(input.businessId, 'INV-1'),
      started: true,
    });

    const again = await cli(['start', '-', '--task-queue', taskQueue], { stdin: JSON.stringify(input) });
    expect(JSON.parse(again.stdout)).toMatchObject({ started: false });

    const state = await cli(['state', input.businessId, 'INV-1']);
    expect(state.code).toBe(0);
    expect(JSON.parse(state.stdout)).toMatchObject({ step: 'parked', parked: { code: 'authority_rejected' } });

    const refund = await cli(['refund', input.businessId, 'INV-1', '-', '--task-queue', taskQueue], {
      stdin: JSON.stringify({ reason: '01', returnDate: '2025-01-16', traderInvoiceNumber: 'CN-1' }),
    });
    expect(refund.code).toBe(1);
    expect(refund.stderr).toContain('was refused: the sale is not signed');

    const cancelled = await cli(['cancel', input.businessId, 'INV-1', 'customer left']);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ step: 'cancelled' });
  });

  it(
    'refuses a second start of the same invoice number with another input: exit 3, the fields named',
    { timeout: 60_000 },
    async () => {
      const input = { ...sale(), customer: { name: 'Wanjiru Kamau' } };
      const first = await cli(['start', '-', '--task-queue', taskQueue], { stdin: JSON.stringify(input) });
      expect(first.code).toBe(0);

      const other = {
        ...input,
        customer: { name: 'Otieno Odhiambo' },
        lines: [{ itemId: 'ITEM-1', quantity: 2, unitPrice: 10 }],
      };
      const conflict = await cli(['start', '-', '--task-queue', taskQueue], { stdin: JSON.stringify(other) });

      expect(conflict.code).toBe(3);
      expect(conflict.stdout).toBe('');
      expect(conflict.stderr).toContain(
        `sale ${saleWorkflowId(input.businessId, 'INV-1')} was already started with another input (differing: customer.name, lines[0].quantity)`,
      );
      expect(conflict.stderr).not.toContain('Otieno');
      const same = await cli(['start', '-', '--task-queue', taskQueue], { stdin: JSON.stringify(input) });
      expect(same.code).toBe(0);
      expect(JSON.parse(same.stdout)).toMatchObject({ started: false });
    },
  );

  it('prints its help', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    for (const verb of ['start', 'sign', 'state', 'receipt', 'refund', 'retry', 'cancel', 'item-fixed']) {
      expect(result.stdout).toContain(`  ${verb} <`);
    }
    // The branch's stock ledger settles stock movements (its settleMovement update), not the sale.
    expect(result.stdout).not.toMatch(/confirm-stock|resend-stock/);
  });
});
