/**
 * What a signed sale leaves open: sales with the default options (a 30-day refund window) are signed through a till's
 * call, then the fleet's open executions other than its stock ledgers, outage watches and day books are counted. A sale that
 * waited for a refund would stay open for its window, one execution (its timer and state) per sale.
 */
import { DEMO } from '../../sandbox/default-fixture.js';
import type { BenchTemporal, BenchWorkers } from './env.js';
import { NAIROBI_LINES, progress } from './env.js';
import { round } from './stats.js';

/** One per branch, application, or control unit and day: shared by every sale, never one a sale leaves open. */
const LONG_LIVED = ['stockLedgerWorkflow', 'outageWatchWorkflow', 'fiscalDayWorkflow'];
/** Visibility lags a closing execution by a moment: counted until it settles at zero, or this long. */
const SETTLE_MS = 15_000;

export async function measureOpenExecutions(
  t: BenchTemporal,
  w: BenchWorkers,
  options: { sales: number; tag: string },
): Promise<{ openExecutionsPerSignedSale: number; signedSales: number }> {
  let signed = 0;
  for (let i = 0; i < options.sales; i++) {
    const answer = await w.sales.startAndAwaitReceipt({
      businessId: DEMO.businesses.nairobi,
      traderInvoiceNumber: `OPEN-${options.tag}-${i}`,
      saleDate: '2026-11-21',
      lines: NAIROBI_LINES,
    });
    if (answer.signed) signed++;
  }
  if (signed === 0) throw new Error('no sale was signed: nothing to count');
  const query =
    `TaskQueue = '${w.taskQueue}' AND ExecutionStatus = 'Running' AND ` +
    `WorkflowType NOT IN (${LONG_LIVED.map((type) => `'${type}'`).join(', ')})`;
  let open = Infinity;
  for (const until = Date.now() + SETTLE_MS; ; await new Promise((r) => setTimeout(r, 500))) {
    open = (await t.client.workflow.count(query)).count;
    if (open === 0 || Date.now() > until) break;
  }
  progress(`open executions after ${signed} signed sales: ${open}`);
  return { openExecutionsPerSignedSale: round(open / signed, 2), signedSales: signed };
}
