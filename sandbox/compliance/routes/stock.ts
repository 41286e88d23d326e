import type { FastifyInstance } from 'fastify';
import { requireScope, resolveBusiness } from '../auth.js';
import type { ComplianceContext } from '../context.js';
import { invalidRequest, unprocessable } from '../errors.js';
import { newId, type StockMovement } from '../model.js';
import { StockAdjustmentRequestSchema, parseBody } from '../requests.js';
import { roundHalfUp } from '../tax.js';
import { selectBranch } from './respond.js';

/**
 * POST /v1/stock/adjustments (C2, C28, C29): one movement per call, never de-duplicated; the quantity
 * on hand is kept per branch and never goes below 0.
 */
export function stockRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  app.post('/v1/stock/adjustments', { onRequest: requireScope('stock:write') }, async (request, reply) => {
    const body = parseBody(StockAdjustmentRequestSchema, request.body);
    const business = resolveBusiness(ctx.state, request);
    const item = ctx.state.items.get(body.itemId);
    if (!item || item.deleted || item.businessId !== business.id) {
      throw invalidRequest({ field: 'itemId', message: `is not an item of business ${business.id}` });
    }
    const branch = selectBranch(business, body.branchId);
    if (!item.view.stockTracked) {
      throw unprocessable('item_not_stock_tracked', `Item ${item.view.id} is not stock tracked`);
    }
    if (item.view.registrationStatus !== 'REGISTERED') {
      throw unprocessable('authority_rejected', `Item ${item.view.id} is not registered with the tax authority`, {
        errors: [
          {
            code: 'item_not_registered',
            field: 'itemId',
            itemId: item.view.id,
            message: `Item ${item.view.id} is not registered with the tax authority`,
          },
        ],
      });
    }
    const before = ctx.state.quantityOnHand(branch.id, item.view.id);
    // Rounded so repeated decimal movements do not drift (0.1 + 0.2).
    const after = roundHalfUp(body.action === 'ADD' ? before + body.quantity : Math.max(0, before - body.quantity), 4);
    ctx.state.setQuantityOnHand(branch.id, item.view.id, after);
    const movement: StockMovement = {
      movementId: newId('mov'),
      businessId: business.id,
      branchId: branch.id,
      itemId: item.view.id,
      action: body.action,
      quantity: body.quantity,
      unitPrice: body.unitPrice ?? null,
      referenceId: body.referenceId ?? null,
      quantityBefore: before,
      quantityOnHand: after,
      at: new Date(ctx.now()).toISOString(),
    };
    ctx.state.movements.push(movement);
    return reply.code(201).send({
      data: {
        itemId: movement.itemId,
        branchId: movement.branchId,
        movementId: movement.movementId,
        quantityOnHand: after,
        fiscal: { stockIo: { status: 'ok' }, stockMaster: { status: 'ok' } },
      },
    });
  });
}
