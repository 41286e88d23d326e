/** Reads and writes of the mapping buckets: updates-with-start, one per bucket a batch touches (Temporal only). */
import { WithStartWorkflowOperation } from '@temporalio/client';
import { BusinessId } from '../src/contracts/search-attributes.js';
import { mappingKeyOf, type Mapping } from '../src/contracts/stock-in.js';
import {
  STOCK_IN_MAPPINGS_WORKFLOW_TYPE,
  STOCK_IN_MAPPING_BUCKETS,
  changeMappingsUpdate,
  findMappingsUpdate,
  mappingBucket,
  stockInMappingsId,
  type StockInMappingsInput,
} from '../src/contracts/stock-in-mappings.js';
import { temporalClientOf, updateOfOwnWorkflow, type ActivityDeps } from './deps.js';

export interface MappingBucketsTarget {
  businessId: string;
  /** The stock-in's own queue. */
  taskQueue: string;
}

export type FindStockInMappingsInput = MappingBucketsTarget & { keys: string[] };
export type ChangeStockInMappingsInput = MappingBucketsTarget & {
  put?: Mapping[];
  remove?: string[];
  /** Every merchant mapping of every bucket removed before `put`. */
  removeMerchant?: boolean;
  /** Every bucket touched (each then follows a new build, as the stock-in did). */
  allBuckets?: boolean;
};
export interface ChangeStockInMappingsResult {
  removed: number;
  /** Mappings each bucket touched holds now. */
  buckets: Record<number, number>;
}

function groupBy<T>(items: readonly T[], bucketOf: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) groups.set(bucketOf(item), [...(groups.get(bucketOf(item)) ?? []), item]);
  return groups;
}

export function createStockInMappingsActivities(deps: Pick<ActivityDeps, 'temporal'>) {
  const startOf = (target: MappingBucketsTarget, bucket: number) =>
    new WithStartWorkflowOperation(STOCK_IN_MAPPINGS_WORKFLOW_TYPE, {
      workflowId: stockInMappingsId(target.taskQueue, target.businessId, bucket),
      taskQueue: target.taskQueue,
      args: [{ businessId: target.businessId, bucket } satisfies StockInMappingsInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [{ key: BusinessId, value: target.businessId }],
      staticSummary: `Stock-in mappings of ${target.businessId}, bucket ${bucket}`,
    });

  return {
    /** The mappings held under these keys; a bucket never written answers none. */
    async findStockInMappings(input: FindStockInMappingsInput): Promise<Mapping[]> {
      const client = temporalClientOf(deps, 'findStockInMappings');
      const found = await Promise.all(
        [...groupBy(input.keys, mappingBucket)].map(([bucket, keys]) =>
          updateOfOwnWorkflow(client, () =>
            client.workflow.executeUpdateWithStart(findMappingsUpdate, {
              args: [{ keys }],
              startWorkflowOperation: startOf(input, bucket),
            }),
          ),
        ),
      );
      return found.flat();
    },

    /** Applied again after a retry, the buckets end the same. */
    async changeStockInMappings(input: ChangeStockInMappingsInput): Promise<ChangeStockInMappingsResult> {
      const client = temporalClientOf(deps, 'changeStockInMappings');
      const puts = groupBy(input.put ?? [], (m) => mappingBucket(mappingKeyOf(m)));
      const removes = groupBy(input.remove ?? [], mappingBucket);
      const buckets =
        input.removeMerchant || input.allBuckets
          ? Array.from({ length: STOCK_IN_MAPPING_BUCKETS }, (_, b) => b)
          : [...new Set([...puts.keys(), ...removes.keys()])];
      const answers = await Promise.all(
        buckets.map(async (bucket) => {
          const answer = await updateOfOwnWorkflow(client, () =>
            client.workflow.executeUpdateWithStart(changeMappingsUpdate, {
              args: [
                {
                  put: puts.get(bucket) ?? [],
                  remove: removes.get(bucket) ?? [],
                  ...(input.removeMerchant ? { removeMerchant: true } : {}),
                },
              ],
              startWorkflowOperation: startOf(input, bucket),
            }),
          );
          return [bucket, answer] as const;
        }),
      );
      return {
        removed: answers.reduce((n, [, a]) => n + a.removed, 0),
        buckets: Object.fromEntries(answers.map(([bucket, a]) => [bucket, a.mappings])),
      };
    },
  };
}
