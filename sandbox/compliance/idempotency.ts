import type { FastifyRequest } from 'fastify';
import { fingerprint } from '../shared/canonical-json.js';
import type { ComplianceContext } from './context.js';
import { conflict, unprocessable } from './errors.js';
import type { DocumentRecord } from './model.js';
import type { BusinessRecord } from './state.js';

/**
 * Files a document at most once per Idempotency-Key (C12–C17). Keys are scoped to (application,
 * business, operation). A repeat with the same body gets the document filed the first time, as it is
 * now; another body is 422 idempotency_key_reused; a repeat while the first is running is 409. When
 * `file` throws (nothing was filed, e.g. a 400) the key is released.
 */
export async function fileOnce(
  ctx: ComplianceContext,
  request: FastifyRequest,
  options: {
    key: string | undefined;
    applicationId: string;
    business: BusinessRecord;
    operation: string;
    file: () => Promise<DocumentRecord>;
  },
): Promise<{ record: DocumentRecord; replayed: boolean }> {
  const { key } = options;
  if (key === undefined) return { record: await options.file(), replayed: false };

  const scope = JSON.stringify([options.applicationId, options.business.id, options.operation]);
  const begin = ctx.idempotency.begin(scope, key, fingerprint(request.body ?? null));
  switch (begin.kind) {
    case 'replay': {
      const record = ctx.state.documents.get(begin.value);
      if (record) return { record, replayed: true };
      break; // the document is gone (sandbox reset): nothing to replay, file anew below
    }
    case 'conflict':
      throw unprocessable('idempotency_key_reused', 'This Idempotency-Key was already used with a different request');
    case 'in-progress':
      throw conflict(
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed; retry shortly',
      );
    case 'new':
      break;
  }
  try {
    const record = await options.file();
    record.idempotencyKeys.push(key);
    completeUnlessReset(ctx, scope, key, record.view.id);
    return { record, replayed: false };
  } catch (err) {
    ctx.idempotency.abandon(scope, key);
    throw err;
  }
}

/** A sandbox reset while the request ran has already forgotten the key; the document still stands. */
function completeUnlessReset(ctx: ComplianceContext, scope: string, key: string, documentId: string): void {
  try {
    ctx.idempotency.complete(scope, key, documentId);
  } catch {
    // The store throws only when the key is no longer in progress, which only a reset does.
  }
}
