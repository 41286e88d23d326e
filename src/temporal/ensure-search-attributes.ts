import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { isGrpcServiceError } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import type { AnySearchAttributeKey } from './search-attributes.js';

// @grpc/grpc-js is only a transitive dependency, so the status code is spelled out.
const GRPC_ALREADY_EXISTS = 6;
const VISIBLE_TIMEOUT_MS = 15_000;

/**
 * Registers the given search attributes on a server we did not start ourselves (TEMPORAL_ADDRESS).
 * Idempotent: existing attributes of the right type are left alone, a concurrent registration is fine.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  keys: readonly AnySearchAttributeKey[],
): Promise<void> {
  const existing = await listCustomAttributes(connection, namespace);
  const missing: Record<string, number> = {};
  for (const key of keys) {
    const wanted = encodeSearchAttributeIndexedValueType(key.type);
    if (wanted === undefined) throw new Error(`unknown search attribute type ${key.type}`);
    const current = existing[key.name];
    if (current === undefined) {
      missing[key.name] = wanted;
    } else if (current !== wanted) {
      throw new Error(
        `search attribute ${key.name} already exists in namespace ${namespace} with a different type than ${key.type}`,
      );
    }
  }
  if (Object.keys(missing).length === 0) return;

  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === GRPC_ALREADY_EXISTS)) throw err;
  }

  // Elasticsearch-backed servers apply the mapping asynchronously.
  const deadline = Date.now() + VISIBLE_TIMEOUT_MS;
  for (;;) {
    const now = await listCustomAttributes(connection, namespace);
    const absent = Object.keys(missing).filter((name) => now[name] === undefined);
    if (absent.length === 0) return;
    if (Date.now() > deadline) throw new Error(`search attributes not visible after registration: ${absent.join(', ')}`);
    await sleep(250);
  }
}

async function listCustomAttributes(connection: Connection, namespace: string): Promise<Record<string, number>> {
  const response = await connection.operatorService.listSearchAttributes({ namespace });
  return { ...(response.customAttributes ?? {}) };
}
