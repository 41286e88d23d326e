import type { FastifyInstance } from 'fastify';
import { callerOf, requireScope, resolveBusiness } from '../auth.js';
import type { ComplianceContext } from '../context.js';
import { invalidRequest, notFound, unprocessable } from '../errors.js';
import { newCreditNote } from '../documents.js';
import { fileOnce } from '../idempotency.js';
import { CreditNoteRequestSchema, idempotencyKeyOf, parseBody } from '../requests.js';
import { sendCreated } from './respond.js';

/**
 * POST /v1/credit-notes (C18, C38): the full reversal of a completed sale, once. A credit note the
 * authority refused still is the sale's credit note; it is retried, not issued again.
 */
export function creditNoteRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  app.post('/v1/credit-notes', { onRequest: requireScope('sales:write') }, async (request, reply) => {
    const key = idempotencyKeyOf(request.headers);
    const body = parseBody(CreditNoteRequestSchema, request.body);
    const business = resolveBusiness(ctx.state, request, body.businessId);
    const { application } = callerOf(request);
    const { record, replayed } = await fileOnce(ctx, request, {
      key,
      applicationId: application.id,
      business,
      operation: 'POST /v1/credit-notes',
      file: async () => {
        const sale = ctx.state.documents.get(body.saleId);
        if (!sale || sale.view.businessId !== business.id) throw notFound(`Sale ${body.saleId}`);
        if (sale.view.type !== 'sale') {
          throw invalidRequest({ field: 'saleId', message: 'names a credit note; only a sale can be credited' });
        }
        if (sale.creditNoteId !== null) {
          throw unprocessable('already_credited', `Sale ${sale.view.id} was already credited`, {
            creditNoteId: sale.creditNoteId,
          });
        }
        if (sale.view.status !== 'completed') {
          throw unprocessable(
            'sale_not_completed',
            `Sale ${sale.view.id} is ${sale.view.status}; only a completed sale can be credited`,
          );
        }
        const record = newCreditNote({ sale: sale.view, request: body, applicationId: application.id, now: ctx.now() });
        sale.creditNoteId = record.view.id;
        ctx.state.documents.set(record.view.id, record);
        await ctx.filing.submit(record, 'pending');
        return record;
      },
    });
    return sendCreated(reply, record, replayed);
  });
}
