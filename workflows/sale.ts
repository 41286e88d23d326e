import { CancellationScope } from '@temporalio/workflow';
import { checkSaleInput } from '../src/contracts/sale-input.js';
import type { SaleInput, SaleState } from '../src/contracts/sale.js';
import { handleSaleMessages, refuseInput } from './sale/messages.js';
import { Sale } from './sale/sale.js';

/**
 * One sale from start to signed receipt and its stock handed to the branch's ledger; what the worker cannot fix parks.
 * It closes then: its result is the signed record a refund (refundWorkflow) reads.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks: nothing unusable goes further.
  const checked = checkSaleInput(input);
  if (!checked.ok) refuseInput(input, checked.problems);
  const sale = new Sale(input);
  handleSaleMessages(sale);
  // Temporal's own cancellation is an operator's word, not a kill: the process runs on, and the sale decides.
  CancellationScope.current().cancelRequested.catch(() => sale.cancelledByTemporal());
  return CancellationScope.nonCancellable(() => sale.run());
}
