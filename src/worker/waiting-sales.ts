import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { businessWaitSalesQuery } from '../client/parked-sales.js';
import { businessServedSignal } from '../contracts/sale.js';

/** Businesses per visibility query: a reload that onboards hundreds stays within a query's length. */
const BUSINESSES_PER_QUERY = 100;

/**
 * Tells the running sales that wait for one of these businesses, now served by this worker's tenants, to try their
 * placement again. Each worker tells after its own reload, so the last one to learn of a business wakes its sales on a
 * worker that serves it; a sale visibility does not list yet finds the business on its own next try.
 */
export async function tellSalesWaitingFor(
  client: Client,
  taskQueue: string,
  businessIds: readonly string[],
  logger: Logger,
): Promise<number> {
  let told = 0;
  for (let start = 0; start < businessIds.length; start += BUSINESSES_PER_QUERY) {
    const query = businessWaitSalesQuery(taskQueue, businessIds.slice(start, start + BUSINESSES_PER_QUERY));
    for await (const sale of client.workflow.list({ query })) {
      try {
        await client.workflow.getHandle(sale.workflowId, sale.runId).signal(businessServedSignal);
        told++;
      } catch (err) {
        // Closed since it was listed (cancelled, or placed by its own timer): nothing to tell.
        logger.debug({ workflowId: sale.workflowId, err: String(err) }, 'a waiting sale could not be told');
      }
    }
  }
  if (told > 0) logger.info({ sales: told, businesses: businessIds.length }, 'told sales their business is served');
  return told;
}
