/**
 * Build B of the roll-out test: every workflow type of build A (workflows/index.ts), each first taking a timer A's
 * code does not take, so a history written by A replays on B with a non-determinism error. Whatever B runs, it ran
 * because Temporal sent it there, never because the change was compatible.
 */
import { sleep } from '@temporalio/workflow';
import * as a from '../../workflows/index.js';

type Workflow = (...args: never[]) => Promise<unknown>;

function changed<W extends Workflow>(workflow: W): W {
  const wrapped = async (...args: Parameters<W>) => {
    await sleep(1);
    return workflow(...args);
  };
  return wrapped as W;
}

export const saleWorkflow = changed(a.saleWorkflow);
export const refundWorkflow = changed(a.refundWorkflow);
export const itemRegistrationWorkflow = changed(a.itemRegistrationWorkflow);
export const purchasesSyncWorkflow = changed(a.purchasesSyncWorkflow);
export const syncBatchWorkflow = changed(a.syncBatchWorkflow);
export const reconciliationWorkflow = changed(a.reconciliationWorkflow);
export const stockLedgerWorkflow = changed(a.stockLedgerWorkflow);
export const outageWatchWorkflow = changed(a.outageWatchWorkflow);
export const catalogueImportWorkflow = changed(a.catalogueImportWorkflow);
export const catalogueChunkWorkflow = changed(a.catalogueChunkWorkflow);
export const fiscalDayWorkflow = changed(a.fiscalDayWorkflow);
