import { isInFlight } from '../contract.js';
import type { FastifyReply } from 'fastify';
import type { ComplianceContext } from '../context.js';
import { ComplianceHttpError, invalidRequest, notFound } from '../errors.js';
import { snapshot, type DocumentRecord } from '../model.js';
import type { BranchRecord, BusinessRecord } from '../state.js';

/** The document of the business with that id; another business's is as unknown as a missing one. */
export function documentOf(ctx: ComplianceContext, business: BusinessRecord, id: string): DocumentRecord {
  const record = ctx.state.documents.get(id);
  if (!record || record.view.businessId !== business.id) throw notFound(`Sale ${id}`);
  return record;
}

/** The 422 `authority_rejected` for a document the authority refused (C5, C33). */
export function rejection(record: DocumentRecord): ComplianceHttpError {
  return new ComplianceHttpError(
    422,
    'authority_rejected',
    record.view.error ?? 'The tax authority rejected the document',
    {
      sale: snapshot(record.view),
      errors: record.causes.map((cause) => ({ ...cause })),
    },
  );
}

/** Answers a creation (C11): 201 signed, 202 in flight, 422 refused; 200 + Idempotent-Replayed on a repeat. */
export function sendCreated(reply: FastifyReply, record: DocumentRecord, replayed: boolean): FastifyReply {
  if (replayed)
    return reply
      .code(200)
      .header('idempotent-replayed', 'true')
      .send({ data: { sale: snapshot(record.view) } });
  if (record.view.status === 'failed') throw rejection(record);
  const status = isInFlight(record.view.status) ? 202 : 201;
  return reply.code(status).send({ data: { sale: snapshot(record.view) } });
}

/** The business's branch named by id or authorityBhfId; its first branch when none is named. */
export function selectBranch(business: BusinessRecord, selector: string | undefined, field = 'branchId'): BranchRecord {
  const first = business.branches[0];
  if (!first) throw new Error(`business ${business.id} has no branch`);
  if (selector === undefined) return first;
  const branch =
    business.branches.find((b) => b.id === selector) ?? business.branches.find((b) => b.authorityBhfId === selector);
  if (branch) return branch;
  throw invalidRequest(
    { field, message: 'is not a branch of the business (give a branch id or authorityBhfId)' },
    { branches: business.branches.map((b) => ({ id: b.id, name: b.name, authorityBhfId: b.authorityBhfId })) },
  );
}

export function pathId(params: unknown): string {
  return (params as { id: string }).id;
}
