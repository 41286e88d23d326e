/** One id per physical branch, however a sale names it (docs/stock-ledger.md, "Which ledger"). */
import { ApplicationFailure } from '@temporalio/common';
import { LRUCache } from 'lru-cache';
import type { Branch, Business } from '../src/compliance/schemas.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';

/** The canonical id of the branch `named` (absent: the business's first branch). */
export type CanonicalBranch = (businessId: string, named: string | undefined) => Promise<string>;

interface Known {
  branches: readonly Branch[];
  readAt: number;
}

/** By id, then authority branch id, then name: a supplier invoice names its branch by its name alone. */
function pick(branches: readonly Branch[], named: string | undefined): string | undefined {
  if (named === undefined) return branches[0]?.id;
  const exact =
    branches.find((b) => b.id === named) ??
    branches.find((b) => b.authorityBhfId === named) ??
    branches.find((b) => b.name === named);
  if (exact) return exact.id;
  // Two branches whose names differ only in case or spaces leave the name ambiguous: never guessed.
  const loose = named.trim().toLowerCase();
  const alike = branches.filter((b) => b.name !== undefined && b.name.trim().toLowerCase() === loose);
  return alike.length === 1 ? alike[0]!.id : undefined;
}

/** Resolves as the service does, cached per process; rules: docs/stock-ledger.md, "Which ledger". */
export function cachedCanonicalBranch(
  listBusinesses: (businessId: string) => Promise<readonly Business[]>,
  options: { maxBusinesses?: number; rereadAfterMs?: number; now?: () => number } = {},
): CanonicalBranch {
  const { maxBusinesses = 10_000, rereadAfterMs = 60_000, now = Date.now } = options;
  // Peeked, never got: the business read longest ago goes first, however often it is used.
  const known = new LRUCache<string, Known>({ max: maxBusinesses });
  const reading = new Map<string, Promise<Known>>();

  // Concurrent hand-overs of one business share one read; one answer lists every business of the key.
  const read = (businessId: string): Promise<Known> => {
    let pending = reading.get(businessId);
    if (!pending) {
      pending = listBusinesses(businessId)
        .then((businesses) => {
          const readAt = now();
          for (const b of businesses) known.set(b.id, { branches: b.branches, readAt });
          if (!businesses.some((b) => b.id === businessId)) known.set(businessId, { branches: [], readAt });
          return known.peek(businessId)!;
        })
        .catch((err: unknown) => {
          // Never final: a signed sale whose hand-over failed for good would fail with it; it waits instead.
          throw err instanceof ApplicationFailure && err.nonRetryable
            ? ApplicationFailure.retryable(err.message, err.type)
            : err;
        })
        .finally(() => reading.delete(businessId));
      reading.set(businessId, pending);
    }
    return pending;
  };

  return async (businessId, named) => {
    const cached = known.peek(businessId);
    let entry = cached ?? (await read(businessId));
    let id = pick(entry.branches, named);
    if (id === undefined && cached && now() - cached.readAt >= rereadAfterMs) {
      entry = await read(businessId);
      id = pick(entry.branches, named);
    }
    if (id !== undefined) return id;
    // Retried, never guessed: a ledger under a name the listing does not know could split the branch's stock.
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.unknownBranch,
      message:
        `business ${businessId} has no ${named === undefined ? 'first branch' : `branch "${named}"`} in the ` +
        `service's listing (branch ids: ${entry.branches.map((b) => b.id).join(', ') || 'none'}); ` +
        'its stock waits until the listing shows it',
    });
  };
}
