// One stock-in per business, started by the purchases sync with the first invoice it tells: never by this client.
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import {
  correctLineUpdate,
  getStockInStateQuery,
  mapLineUpdate,
  putMappingsUpdate,
  removeMappingUpdate,
  stockInWorkflowId,
  type InvoiceStock,
  type Mapping,
  type MappingInput,
  type MappingKey,
  type StockInState,
} from '../contracts/stock-in.js';
import { STOCK_IN_MAPPING_BUCKETS, listMappingsQuery, stockInMappingsId } from '../contracts/stock-in-mappings.js';
import { WorkflowOperationError } from './errors.js';
import { connectSalesClient, runOperation, TaskQueueClient } from './sales-client.js';
import { mappingsFromCsv, mappingsToCsv } from './stock-in-csv.js';
import {
  parseCorrectLine,
  parseMapLine,
  parseMappingKey,
  parseMappings,
  parseStockInBusinessId,
  type CheckedMapping,
  type CorrectLineRequest,
  type MapLineRequest,
} from './stock-in-input.js';

export type StockInOperation = 'getState' | 'getMappings' | 'mapLine' | 'correctLine' | 'putMappings' | 'removeMapping';

export class StockInOperationError extends WorkflowOperationError<StockInOperation> {
  override readonly name: string = 'StockInOperationError';
}

/** No stock-in runs for the business on the task queue: nothing confirmed yet, or stock-in is off for it. */
export class StockInNotStartedError extends StockInOperationError {
  override readonly name = 'StockInNotStartedError';
}

/**
 * Mappings per `putMappings` update: a payload well under Temporal's limit however long the keys. An import of more
 * is sent in several, the first one replacing when asked; one that fails part way is made whole by importing again.
 */
export const MAPPINGS_PER_UPDATE = 1_000;

export interface PutMappingsOptions {
  /** Replace every merchant mapping (learned ones stay), rather than add to and change them. */
  replace?: boolean;
}

export interface PutMappingsResult {
  /** Mappings the stock-in holds now, merchant and learned. */
  mappings: number;
  /** Mappings sent. */
  imported: number;
}

export class StockInClient extends TaskQueueClient {
  handle(businessId: string): WorkflowHandle {
    return this.client.workflow.getHandle(stockInWorkflowId(this.taskQueue, parseStockInBusinessId(businessId)));
  }

  async state(businessId: string): Promise<StockInState> {
    return this.run('getState', businessId, (handle) => handle.query(getStockInStateQuery));
  }

  /** Every mapping, merchant and learned, read from the business's buckets (the stock-in carries none of them). */
  async mappings(businessId: string): Promise<Mapping[]> {
    const id = parseStockInBusinessId(businessId);
    return this.run('getMappings', businessId, async (handle) => {
      const buckets = await Promise.all(
        Array.from({ length: STOCK_IN_MAPPING_BUCKETS }, (_, bucket) =>
          this.client.workflow
            .getHandle(stockInMappingsId(this.taskQueue, id, bucket))
            .query(listMappingsQuery)
            .catch((err: unknown) => {
              if (err instanceof WorkflowNotFoundError) return undefined;
              throw err;
            }),
        ),
      );
      // No bucket yet: say whether the stock-in itself has started.
      if (buckets.every((b) => b === undefined)) await handle.describe();
      return buckets.flatMap((b) => b ?? []);
    });
  }

  /** Maps a waiting line (remembered for the supplier); answers the invoice after its matched lines went in. */
  async mapLine(businessId: string, request: MapLineRequest): Promise<InvoiceStock> {
    const args = parseMapLine(request);
    return this.run('mapLine', businessId, (handle) => handle.executeUpdate(mapLineUpdate, { args: [args] }));
  }

  /** Moves what a stocked line added onto another item, once. */
  async correctLine(businessId: string, request: CorrectLineRequest): Promise<InvoiceStock> {
    const args = parseCorrectLine(request);
    return this.run('correctLine', businessId, (handle) => handle.executeUpdate(correctLineUpdate, { args: [args] }));
  }

  async putMappings(
    businessId: string,
    mappings: readonly MappingInput[],
    options: PutMappingsOptions = {},
  ): Promise<PutMappingsResult> {
    const args = parseMappings(mappings, options.replace ?? false);
    return this.send(businessId, args.mappings, args.replace);
  }

  async removeMapping(businessId: string, key: MappingKey): Promise<{ removed: boolean }> {
    const args = parseMappingKey(key);
    return this.run('removeMapping', businessId, (handle) =>
      handle.executeUpdate(removeMappingUpdate, { args: [args] }),
    );
  }

  /** Columns `supplierPin,by,key,itemId,factor,notStock,source` (src/client/stock-in-csv.ts). */
  async exportMappingsCsv(businessId: string): Promise<string> {
    return mappingsToCsv(await this.mappings(businessId));
  }

  /** Every row checked before anything is sent: a `MappingsCsvError` names each bad row and field. */
  async importMappingsCsv(
    businessId: string,
    csv: string,
    options: PutMappingsOptions = {},
  ): Promise<PutMappingsResult> {
    parseStockInBusinessId(businessId);
    return this.send(businessId, mappingsFromCsv(csv), options.replace ?? false);
  }

  private async send(businessId: string, mappings: CheckedMapping[], replace: boolean): Promise<PutMappingsResult> {
    let answer = { mappings: 0 };
    let start = 0;
    do {
      const chunk = mappings.slice(start, start + MAPPINGS_PER_UPDATE);
      const args = { mappings: chunk, replace: replace && start === 0 };
      answer = await this.run('putMappings', businessId, (handle) =>
        handle.executeUpdate(putMappingsUpdate, { args: [args] }),
      );
      start += MAPPINGS_PER_UPDATE;
    } while (start < mappings.length);
    return { mappings: answer.mappings, imported: mappings.length };
  }

  private async run<T>(
    operation: StockInOperation,
    businessId: string,
    call: (handle: WorkflowHandle) => Promise<T>,
  ): Promise<T> {
    const handle = this.handle(businessId);
    const { workflowId } = handle;
    return runOperation(StockInOperationError, operation, workflowId, async () => {
      try {
        return await call(handle);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        const message = await this.notStarted(handle, businessId);
        throw new StockInNotStartedError(operation, workflowId, 'not_found', message, { cause: err });
      }
    });
  }

  /** An update to an ended run is refused as not found too: the description tells it from one never started. */
  private async notStarted(handle: WorkflowHandle, businessId: string): Promise<string> {
    const status = await handle.describe().then(
      (description) => description.status.name,
      () => undefined,
    );
    if (status !== undefined && status !== 'RUNNING')
      return (
        `the stock-in of business ${businessId} (${handle.workflowId}) has ended (${status.toLowerCase()}): ` +
        'the purchases sync starts a new one, without its mappings, with the next invoice it tells'
      );
    return (
      `no stock-in for business ${businessId} on task queue ${this.taskQueue} (${handle.workflowId}): it starts ` +
      'with the first supplier invoice the purchases sync tells it, for a business with stock-in settings; ' +
      'check the business id and the task queue'
    );
  }
}

export type ConnectedStockInClient = Awaited<ReturnType<typeof connectStockInClient>>;

export async function connectStockInClient(options: Parameters<typeof connectSalesClient>[0] = {}) {
  const { client, settings, close } = await connectSalesClient(options);
  return { stockIn: new StockInClient(client, options), client, settings, close };
}
