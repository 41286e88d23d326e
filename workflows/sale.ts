import { CancellationScope, allHandlersFinished, condition } from '@temporalio/workflow';
import { checkSaleInput } from '../src/contracts/sale-input.js';
import type { SaleInput, SaleState } from '../src/contracts/sale.js';
import { DocumentProcess, OperatorCancelled } from './document/process.js';
import { SaleFiling } from './sale/filing.js';
import { handleSaleMessages, handleTemporalCancellation, refuseInput } from './sale/messages.js';
import { placeWhenServed } from './sale/unserved.js';

/**
 * One sale from start to signed receipt and its stock handed to the branch's ledger; what the worker cannot fix parks.
 * It closes then: its result is the signed record a refund (refundWorkflow) reads.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks: nothing unusable goes further.
  const checked = checkSaleInput(input);
  if (!checked.ok) refuseInput(input, checked.problems);
  const sale = new DocumentProcess('sale', input);
  handleSaleMessages(sale);
  // Temporal's own cancellation is an operator's word, not a kill: the process runs on, and the sale decides.
  CancellationScope.current().cancelRequested.catch(() => handleTemporalCancellation(sale));
  return CancellationScope.nonCancellable(() => runSale(sale));
}

async function runSale(sale: DocumentProcess<SaleInput>): Promise<SaleState> {
  try {
    // Before anything is sent: calls spend the serving application's budget; an unserved business is waited for.
    sale.route = await placeWhenServed(sale);
    const filing = new SaleFiling(sale);
    await filing.sign();
    await filing.handOverDeductions();
    sale.record.closed();
  } catch (err) {
    if (!(err instanceof OperatorCancelled)) throw err;
    sale.record.cancelled(err.message);
  }
  await condition(allHandlersFinished);
  return sale.record.state;
}
