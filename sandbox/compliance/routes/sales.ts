import type { FastifyInstance } from 'fastify';
import { callerOf, requireScope, resolveBusiness } from '../auth.js';
import type { ComplianceContext } from '../context.js';
import { conflict, invalidRequest } from '../errors.js';
import { newSale } from '../documents.js';
import { fileOnce } from '../idempotency.js';
import { snapshot, type ItemRecord } from '../model.js';
import { renderReceiptPdf } from '../receipt-pdf.js';
import { SaleRequestSchema, idempotencyKeyOf, parseBody } from '../requests.js';
import { documentOf, pathId, rejection, selectBranch, sendCreated } from './respond.js';

/** Sales: issue (C10–C17, C30–C34), read, retry (C35, C36) and receipt download (C25). */
export function salesRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  app.post('/v1/sales', { onRequest: requireScope('sales:write') }, async (request, reply) => {
    const key = idempotencyKeyOf(request.headers);
    const body = parseBody(SaleRequestSchema, request.body);
    const business = resolveBusiness(ctx.state, request);
    const { application } = callerOf(request);
    const { record, replayed } = await fileOnce(ctx, request, {
      key,
      applicationId: application.id,
      business,
      operation: 'POST /v1/sales',
      file: async () => {
        const branch = selectBranch(business, body.branchId);
        const items = new Map<string, ItemRecord>();
        body.lines.forEach((line, index) => {
          const item = ctx.state.items.get(line.itemId);
          // An item the business does not have is a malformed request, not a refusal (C34).
          if (!item || item.deleted || item.businessId !== business.id) {
            throw invalidRequest({
              field: `lines[${index}].itemId`,
              message: `is not an item of business ${business.id}`,
            });
          }
          items.set(item.view.id, item);
        });
        const record = newSale({
          request: body,
          business,
          branch,
          items,
          applicationId: application.id,
          now: ctx.now(),
        });
        ctx.state.documents.set(record.view.id, record);
        await ctx.filing.submit(record, 'pending');
        return record;
      },
    });
    return sendCreated(reply, record, replayed);
  });

  app.get('/v1/sales/:id', { onRequest: requireScope('sales:read') }, async (request) => {
    const business = resolveBusiness(ctx.state, request);
    return { data: { sale: snapshot(documentOf(ctx, business, pathId(request.params)).view) } };
  });

  app.post('/v1/sales/:id/retry', { onRequest: requireScope('sales:write') }, async (request) => {
    const business = resolveBusiness(ctx.state, request);
    const record = documentOf(ctx, business, pathId(request.params));
    switch (record.view.status) {
      case 'completed':
        return { data: { sale: snapshot(record.view) } };
      case 'failed':
        await ctx.filing.submit(record, 'retrying');
        if (record.view.status === 'failed') throw rejection(record);
        return { data: { sale: snapshot(record.view) } };
      default:
        throw conflict('not_retryable', `A document that is ${record.view.status} cannot be retried`, {
          sale: snapshot(record.view),
        });
    }
  });

  app.get('/v1/sales/:id/receipt', { onRequest: requireScope('sales:read') }, async (request, reply) => {
    const business = resolveBusiness(ctx.state, request);
    const record = documentOf(ctx, business, pathId(request.params));
    const { receipt } = record.view;
    if (receipt === null) {
      throw conflict(
        'receipt_not_available',
        `Sale ${record.view.id} has no receipt while it is ${record.view.status}`,
      );
    }
    const branch = business.branches.find((b) => b.id === record.view.branchId);
    const pdf = await renderReceiptPdf({
      businessName: business.name,
      businessPin: business.pin,
      branchName: branch?.name ?? record.view.branchId,
      document: { ...snapshot(record.view), receipt },
    });
    return reply
      .code(200)
      .header('content-type', 'application/pdf')
      .header('content-disposition', `inline; filename="receipt-${record.view.id}.pdf"`)
      .send(pdf);
  });
}
