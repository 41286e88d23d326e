import { setTimeout as sleep } from 'node:timers/promises';
import { isGrpcServiceError, type ConnectionLike } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { toCliSearchAttributes, type AnySearchAttributeKey } from '../contracts/search-attributes.js';
import { GRPC } from './connection.js';

const VISIBLE_TIMEOUT_MS = 15_000;

/** A client's or a worker's connection: both reach the operator service. */
type Connection = Pick<ConnectionLike, 'operatorService'>;

type Registration = { namespace: string; address: string; keys: readonly AnySearchAttributeKey[] };

export class SearchAttributesError extends Error {
  override readonly name = 'SearchAttributesError';
}

/** Idempotent: existing attributes of the right type are left alone, a concurrent registration is fine. */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  keys: readonly AnySearchAttributeKey[],
  existing?: Record<string, number>,
): Promise<'present' | 'registered'> {
  existing ??= await listCustomAttributes(connection, namespace);
  const missing: Record<string, number> = {};
  for (const key of keys) {
    const wanted = encodeSearchAttributeIndexedValueType(key.type);
    if (wanted === undefined) throw new Error(`unknown search attribute type ${key.type}`);
    const current = existing[key.name];
    if (current === undefined) missing[key.name] = wanted;
    else if (current !== wanted)
      throw new SearchAttributesError(
        `search attribute ${key.name} already exists in namespace ${namespace} ` +
          `with a different type than ${key.type}: ` +
          'the sale workflows cannot record it; an administrator must remove it or use another namespace',
      );
  }
  if (Object.keys(missing).length === 0) return 'present';

  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === GRPC.ALREADY_EXISTS)) throw err;
  }

  // Elasticsearch-backed servers apply the mapping asynchronously.
  const deadline = Date.now() + VISIBLE_TIMEOUT_MS;
  for (;;) {
    const now = await listCustomAttributes(connection, namespace);
    const absent = Object.keys(missing).filter((name) => now[name] === undefined);
    if (absent.length === 0) return 'registered';
    if (Date.now() > deadline)
      throw new Error(`search attributes not visible after registration: ${absent.join(', ')}`);
    await sleep(250);
  }
}

async function listCustomAttributes(connection: Connection, namespace: string): Promise<Record<string, number>> {
  const response = await connection.operatorService.listSearchAttributes({ namespace });
  return { ...(response.customAttributes ?? {}) };
}

function searchAttributeCommands({ keys, namespace, address }: Registration): string[] {
  const byType = Map.groupBy(toCliSearchAttributes(keys), (attribute) => attribute.type);
  const cli = [...byType].map(
    ([type, attributes]) =>
      `temporal operator search-attribute create --address ${address} --namespace ${namespace} ` +
      `${attributes.map(({ name }) => `--name ${name}`).join(' ')} --type ${type}`,
  );
  const cloud = `tcld namespace search-attributes add --namespace ${namespace} ${toCliSearchAttributes(keys)
    .map(({ name, type }) => `--search-attribute "${name}=${type}"`)
    .join(' ')}`;
  return [...cli.map((c) => `  ${c}`), '  Temporal Cloud:', `  ${cloud}`];
}

export async function requireSearchAttributes(connection: Connection, options: Registration) {
  const { namespace, keys } = options;
  const before = await listCustomAttributes(connection, namespace).catch((err: unknown) => {
    throw refusal(err, 'may not list', options);
  });
  try {
    return await ensureSearchAttributes(connection, namespace, keys, before);
  } catch (err) {
    if (err instanceof SearchAttributesError) throw err;
    const missing = keys.filter((k) => before[k.name] === undefined);
    throw refusal(err, 'may not register', { ...options, keys: missing.length > 0 ? missing : keys });
  }
}

function refusal(err: unknown, what: string, options: Registration): SearchAttributesError {
  const code = isGrpcServiceError(err) ? err.code : undefined;
  const reason =
    code === GRPC.PERMISSION_DENIED || code === GRPC.UNAUTHENTICATED
      ? 'permission denied'
      : code === GRPC.UNIMPLEMENTED
        ? 'the server does not offer this operation (Temporal Cloud: use tcld or the Cloud UI)'
        : err instanceof Error
          ? err.message
          : String(err);
  const names = options.keys.map((k) => k.name).join(', ');
  return new SearchAttributesError(
    [
      `this worker ${what} the search attributes of namespace "${options.namespace}" (${reason}).`,
      `The sale workflows need ${names}; without them every sale would be signed and then stuck. ` +
        'An administrator must run:',
      ...searchAttributeCommands(options),
      'then start the worker again.',
    ].join('\n'),
  );
}
