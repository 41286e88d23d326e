import type { FastifyInstance } from 'fastify';
import { requireScope, resolveBusiness } from '../auth.js';
import type { ComplianceContext } from '../context.js';
import { conflict, notFound, unprocessable } from '../errors.js';
import { DEFAULT_TAX_CATEGORY } from '../fixture-schema.js';
import { newId, snapshot, type AuthorityCause, type ItemRecord } from '../model.js';
import { ItemCreateRequestSchema, RegisterRequestSchema, parseBody } from '../requests.js';
import { computeNeeds, type BusinessRecord } from '../state.js';
import { pathId, selectBranch } from './respond.js';

function itemOf(ctx: ComplianceContext, business: BusinessRecord, id: string): ItemRecord {
  const item = ctx.state.items.get(id);
  if (!item || item.deleted || item.businessId !== business.id) throw notFound(`Item ${id}`);
  return item;
}

/** Why the authority would refuse to register the item, one cause per missing part. */
function missingParts(item: ItemRecord): AuthorityCause[] {
  const causes: AuthorityCause[] = [];
  if (item.view.needs.productType) {
    causes.push({
      code: 'product_type_missing',
      field: 'productTypeCode',
      itemId: item.view.id,
      message: 'The item has no product type',
    });
  }
  if (item.view.needs.classificationMapping) {
    causes.push({
      code: 'classification_mapping_missing',
      field: 'classificationCode',
      itemId: item.view.id,
      message: 'The item is not mapped to a tax authority item classification',
    });
  }
  return causes;
}

/** What a new item lacks: a code it was not given, or a part the authority's item-needs rules say it will not take. */
function neededOnCreation(
  ctx: ComplianceContext,
  businessId: string,
  externalId: string,
  codes: { productTypeCode: string | null; classificationCode: string | null },
) {
  const computed = computeNeeds(codes);
  const ruled = ctx.authority.itemNeeds(businessId, externalId);
  return {
    productType: computed.productType || ruled.productType,
    classificationMapping: computed.classificationMapping || ruled.classificationMapping,
  };
}

/** Items: list (C1), create (C21), register (C22, C23). */
export function itemRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  app.get('/v1/items', { onRequest: requireScope('catalog:read') }, async (request) => {
    const business = resolveBusiness(ctx.state, request);
    return { data: { items: ctx.state.itemsOf(business.id).map((item) => snapshot(item.view)) } };
  });

  app.post('/v1/items', { onRequest: requireScope('catalog:write') }, async (request, reply) => {
    const body = parseBody(ItemCreateRequestSchema, request.body);
    const business = resolveBusiness(ctx.state, request);
    const existing = ctx.state.itemByExternalId(business.id, body.externalId);
    if (existing) {
      throw conflict('already_exists', `An item with externalId ${body.externalId} already exists`, {
        item: snapshot(existing.view),
      });
    }
    const productTypeCode = body.productTypeCode ?? null;
    const classificationCode = body.classificationCode ?? null;
    const item: ItemRecord = {
      businessId: business.id,
      deleted: false,
      registeredBranchIds: [],
      registrations: 0,
      view: {
        id: newId('item'),
        externalId: body.externalId,
        name: body.name,
        sku: body.sku ?? '',
        taxCategory: body.taxCategory ?? DEFAULT_TAX_CATEGORY[body.taxTypeCode],
        taxTypeCode: body.taxTypeCode,
        productTypeCode,
        classificationCode,
        unitCode: body.unitCode ?? 'U',
        packagingUnitCode: body.packagingUnitCode ?? 'NT',
        unitPrice: body.unitPrice,
        stockTracked: body.stockTracked ?? true,
        registrationStatus: 'PENDING',
        needs: neededOnCreation(ctx, business.id, body.externalId, { productTypeCode, classificationCode }),
      },
    };
    ctx.state.createItem(item);
    return reply.code(201).send({ data: { item: snapshot(item.view) } });
  });

  app.post('/v1/items/:id/register', { onRequest: requireScope('catalog:write') }, async (request) => {
    const body = parseBody(RegisterRequestSchema, request.body, { optional: true });
    const business = resolveBusiness(ctx.state, request);
    const item = itemOf(ctx, business, pathId(request.params));
    const branch = selectBranch(business, body.branchId);
    if (item.view.registrationStatus === 'REGISTERED' && body.reRegister !== true) {
      return { data: { item: snapshot(item.view) } }; // nothing is sent to the authority (C23)
    }
    const causes = missingParts(item);
    if (causes.length > 0) {
      throw unprocessable('authority_rejected', causes.map((c) => c.message).join('; '), {
        item: snapshot(item.view),
        errors: causes,
      });
    }
    item.view.registrationStatus = 'REGISTERED';
    item.registrations += 1;
    if (!item.registeredBranchIds.includes(branch.id)) item.registeredBranchIds.push(branch.id);
    return { data: { item: snapshot(item.view) } };
  });
}
