import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ComplianceContext } from './context.js';
import { conflict, invalidRequest, notFound } from './errors.js';
import { PURCHASE_STATUS_VALUES, PurchaseFixtureSchema } from './fixture-schema.js';
import { INSPECTION_PREFIX, type InspectedPurchase } from './inspection-types.js';
import { snapshot, type PurchaseRecord } from './model.js';
import type { PurchaseTimeline } from './purchase-timeline.js';
import { parseBody, parseQuery } from './requests.js';
import { pathId } from './routes/respond.js';
import { purchaseRecord } from './state.js';

export type { InspectedPurchase };

const ListQuery = z.object({ businessId: z.string().min(1).optional() });
const AddBody = z.object({ businessId: z.string().min(1), purchase: PurchaseFixtureSchema });
const ReviewBody = z.object({
  status: z.enum(PURCHASE_STATUS_VALUES),
  confirmationError: z.string().min(1).nullable().default(null),
});

function inspected(record: PurchaseRecord): InspectedPurchase {
  return { purchase: snapshot(record.view), businessId: record.businessId, visible: record.visible };
}

/**
 * The dashboard's and the tax authority's side of supplier invoices, for tests and demos (no key, never
 * faulted): read every invoice, held ones included; hand the authority a new invoice, fetched by the next pull
 * (late, with whatever invoice date it carries); review an invoice as the dashboard would (C9).
 */
export function purchaseInspectionRoutes(
  app: FastifyInstance,
  ctx: ComplianceContext,
  timeline: PurchaseTimeline,
): void {
  const at = (path: string) => `${INSPECTION_PREFIX}${path}`;

  app.get(at('/purchases'), async (request) => {
    const { businessId } = parseQuery(ListQuery, request.query);
    return {
      purchases: ctx.state.purchases
        .filter((p) => businessId === undefined || p.businessId === businessId)
        .map(inspected),
    };
  });

  app.post(at('/purchases'), async (request, reply) => {
    const { businessId, purchase } = parseBody(AddBody, request.body);
    const business = ctx.fixture.businesses.find((b) => b.id === businessId);
    if (!business || !ctx.state.businesses.has(businessId)) throw notFound(`Business ${businessId}`);
    if (!business.branches.some((b) => b.id === purchase.branchId)) {
      throw invalidRequest({ field: 'purchase.branchId', message: `is not a branch of business ${businessId}` });
    }
    if (ctx.state.purchases.some((p) => p.view.id === purchase.id))
      throw conflict('already_exists', `Purchase ${purchase.id} already exists`);
    const record = purchaseRecord(business, { ...purchase, pendingPull: true });
    timeline.plan(record, { arrivesAtPull: purchase.arrivesAtPull, reviews: purchase.reviews });
    ctx.state.purchases.push(record);
    return reply.code(201).send(inspected(record));
  });

  app.post(at('/purchases/:id/review'), async (request) => {
    const { status, confirmationError } = parseBody(ReviewBody, request.body);
    const record = ctx.state.purchases.find((p) => p.view.id === pathId(request.params));
    if (!record) throw notFound(`Purchase ${pathId(request.params)}`);
    record.view.status = status;
    record.view.confirmationError = confirmationError;
    return inspected(record);
  });
}
