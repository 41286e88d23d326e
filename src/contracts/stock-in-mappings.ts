/**
 * The merchant's mappings of supplier lines to items, kept per business in a fixed number of buckets by key, so that no
 * one workflow carries them all (docs/stock-in.md, "Where the mappings live"). Workflow code imports this file.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Mapping } from './stock-in.js';

export const STOCK_IN_MAPPINGS_WORKFLOW_TYPE = 'stockInMappingsWorkflow';

/** Part of every bucket's id: changing it would lose the mappings. 32 keep 20,000 mappings near 70 KB a bucket. */
export const STOCK_IN_MAPPING_BUCKETS = 32;

/** FNV-1a over the UTF-16 units: the same bucket on every worker and in workflow code. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * The bucket of a mapping's key (`mappingKeyOf`): by the whole key, not the supplier alone, so a distributor with
 * thousands of mappings spreads over every bucket like the rest. Lines are looked up by key, so nothing needs a
 * supplier's mappings together.
 */
export function mappingBucket(key: string): number {
  return fnv1a(key) % STOCK_IN_MAPPING_BUCKETS;
}

export function stockInMappingsId(taskQueue: string, businessId: string, bucket: number): string {
  return `stock-in-mappings:${taskQueue}:${businessId}:${bucket}`;
}

export const STOCK_IN_MAPPINGS_CARRY_SCHEMA = 1;

export interface StockInMappingsInput {
  businessId: string;
  bucket: number;
  carried?: { schema: number; mappings: Mapping[] };
}

/** A change: `put` as a door or an operator gave them, `remove` by key, or every merchant mapping removed first. */
export interface MappingsChange {
  put?: Mapping[];
  /** Keys as `mappingKeyOf` makes them. */
  remove?: string[];
  removeMerchant?: boolean;
}

/** The mappings held under these keys (`mappingKeyOf`); a key none holds is absent. */
export const findMappingsUpdate = defineUpdate<Mapping[], [{ keys: string[] }]>('find');
/** Answers how many mappings the bucket holds after the change, and how many of `remove` were there. */
export const changeMappingsUpdate = defineUpdate<{ mappings: number; removed: number }, [MappingsChange]>('change');
export const listMappingsQuery = defineQuery<Mapping[]>('listMappings');
