import type { FastifyInstance } from 'fastify';
import { requireScope, resolveBusiness } from '../auth.js';
import type { ComplianceContext } from '../context.js';
import { invalidRequest } from '../errors.js';
import { snapshot } from '../model.js';
import { decodeCursor, encodeCursor, newestFirst } from '../purchase-cursor.js';
import { purchaseInspectionRoutes } from '../purchase-inspection.js';
import { PurchaseTimeline } from '../purchase-timeline.js';
import { PurchasesQuerySchema, parseQuery } from '../requests.js';

const DEFAULT_PAGE_SIZE = 20;

/**
 * Supplier invoices (C9, C26, C27, C57): the list shows what has been fetched from the authority, newest
 * first, one page at a time; a pull fetches the invoices the fixture holds back (`pendingPull`, late ones by
 * `arrivesAtPull`) and shows the reviews done since (`reviews`). The inspection API adds and reviews invoices.
 */
export function purchaseRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  const timeline = new PurchaseTimeline(ctx.fixture);
  purchaseInspectionRoutes(app, ctx, timeline);

  app.get('/v1/purchases', { onRequest: requireScope('purchases:read') }, async (request) => {
    const query = parseQuery(PurchasesQuerySchema, request.query);
    const business = resolveBusiness(ctx.state, request);
    if (query.fromDate !== undefined && query.toDate !== undefined && query.fromDate > query.toDate) {
      throw invalidRequest({ field: 'toDate', message: 'must not be before fromDate' });
    }
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const matching = ctx.state.purchases
      .filter(
        (p) =>
          p.businessId === business.id &&
          p.visible &&
          (query.status === undefined || p.view.status === query.status) &&
          (query.fromDate === undefined || p.view.invoiceDate >= query.fromDate) &&
          (query.toDate === undefined || p.view.invoiceDate <= query.toDate),
      )
      .map((p) => p.view)
      .sort(newestFirst)
      .filter((p) => after === undefined || newestFirst(p, after) > 0);
    const page = matching.slice(0, pageSize);
    const last = page[page.length - 1];
    return {
      data: { purchases: page.map((p) => snapshot(p)) },
      pagination: { nextCursor: matching.length > pageSize && last ? encodeCursor(last) : null, pageSize },
    };
  });

  app.post('/v1/purchases/pull', { onRequest: requireScope('purchases:read') }, async (request) => {
    const business = resolveBusiness(ctx.state, request);
    const own = ctx.state.purchases.filter((p) => p.businessId === business.id);
    const fetched = timeline.pull(business, own);
    return { data: { pulled: fetched.length, total: own.filter((p) => p.visible).length } };
  });
}
