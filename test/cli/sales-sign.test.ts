/**
 * `npm run sales -- sign` and `receipt`: a till's receipt from a shell, against the real sale workflow on real
 * workers (the sandbox over HTTP), with the exit codes a script branches on.
 */
import { describe, expect, it } from 'vitest';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { DEMO, invoiceNumber, saleInput, useSaleHarness } from '../workflows/harness.js';
import { runSalesCli } from '../helpers/run-cli.js';

const h = useSaleHarness();

const sales = runSalesCli;

const sign = (input: SaleInput, ...flags: string[]) =>
  sales(['sign', '-', '--task-queue', h.taskQueue, ...flags], { stdin: JSON.stringify(input) });

describe('npm run sales -- sign', () => {
  it(
    'starts the sale and prints the signed receipt in one call (exit 0); another input is a conflict (exit 3)',
    { timeout: 90_000 },
    async () => {
      const input = saleInput({ options: { refundWindowDays: 1 }, customer: { name: 'Wanjiru Kamau' } });

      const signed = await sign(input, '--wait', '30s');

      expect(signed.stderr).toBe('');
      expect(signed.code).toBe(0);
      const answer = JSON.parse(signed.stdout) as {
        workflowId: string;
        signed: boolean;
        receipt: { signature: string };
      };
      expect(answer).toMatchObject({
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        signed: true,
      });
      expect(answer.receipt.signature).toEqual(expect.any(String));

      const conflict = await sign({ ...input, customer: { name: 'Otieno Odhiambo' } });
      expect(conflict.code).toBe(3);
      expect(conflict.stdout).toBe('');
      expect(conflict.stderr).toContain('was already started with another input (differing: customer.name)');
      expect(conflict.stderr).not.toContain('Otieno');
    },
  );

  it('exits 4 with the state when the sale is not signed within the wait', { timeout: 60_000 }, async () => {
    const input = saleInput({
      traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject),
      options: { refundWindowDays: 1 },
    });
    await h.start(input);

    const result = await sales(['receipt', input.businessId, input.traderInvoiceNumber, '--wait', '20s']);

    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout)).toMatchObject({
      signed: false,
      receipt: null,
      state: { step: 'parked', parked: { code: 'authority_rejected' } },
    });
  });

  it('refuses a bad wait with exit 2 before connecting', async () => {
    const result = await sales(['sign', '-', '--wait', '2 hours'], {
      stdin: JSON.stringify(saleInput()),
      address: '127.0.0.1:1',
    });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid awaitReceipt request: wait must be at most 10 minutes');
  });
});
