import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { FaultRuleSchema } from '../shared/faults.js';
import { OutageSchema } from '../shared/outage-schema.js';
import { OutageError } from '../shared/outages.js';
import { causeFor } from './authority.js';
import type { ComplianceContext } from './context.js';
import { ComplianceHttpError, invalidRequest, notFound } from './errors.js';
import { AUTHORITY_ERROR_CODE_VALUES, AuthorityRuleSchema, ItemNeedsRuleSchema } from './fixture-schema.js';
import { INSPECTION_PREFIX, type InspectedDocument } from './inspection-types.js';
import { snapshot, type DocumentRecord } from './model.js';
import { parseBody, parseQuery } from './requests.js';
import { computeNeeds } from './state.js';
import { pathId } from './routes/respond.js';

const text = z.string().min(1).optional();
const DocumentsQuery = z.object({
  businessId: text,
  traderInvoiceNumber: text,
  type: z.enum(['sale', 'credit_note']).optional(),
});
const MovementsQuery = z.object({
  businessId: text,
  branchId: text,
  itemId: text,
  referenceId: text,
  /** The references of one caller's batch (an invoice's lines, say) share a prefix: counting them finds a repeat. */
  referencePrefix: text,
});
const LevelsQuery = z.object({ businessId: z.string().min(1) });
const CallbacksQuery = z.object({ documentId: text });
const RequestLogQuery = z.object({
  since: z
    .string()
    .refine((v) => /^\d+$/.test(v) || !Number.isNaN(Date.parse(v)), 'must be epoch milliseconds or an ISO date-time')
    .transform((v) => (/^\d+$/.test(v) ? Number(v) : Date.parse(v)))
    .optional(),
  applicationId: text,
  service: z.enum(['compliance', 'accounting']).optional(),
});
const SettleBody = z.object({
  outcome: z.enum(['completed', 'failed']),
  errorCode: z.enum(AUTHORITY_ERROR_CODE_VALUES).optional(),
  message: z.string().min(1).optional(),
});

function inspected(record: DocumentRecord): InspectedDocument {
  return {
    sale: snapshot(record.view),
    applicationId: record.applicationId,
    idempotencyKeys: [...record.idempotencyKeys],
    submissions: record.submissions,
    causes: record.causes.map((c) => ({ ...c })),
    history: record.history.map((h) => ({ ...h })),
    creditNoteId: record.creditNoteId,
  };
}

/**
 * The inspection API (no key, never rate limited, faulted or counted): what tests and demos read to see
 * the effect of calls, plus the controls a dashboard would have (settle, cancel, fix an item) and the
 * sandbox's own (faults, authority rules, outages, reset).
 */
export function inspectionRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  const at = (path: string) => `${INSPECTION_PREFIX}${path}`;
  const documentById = (params: unknown) => {
    const record = ctx.state.documents.get(pathId(params));
    if (!record) throw notFound(`Document ${pathId(params)}`);
    return record;
  };

  app.get(at('/health'), async () => ({ status: 'ok' }));

  app.get(at('/documents'), async (request) => {
    const query = parseQuery(DocumentsQuery, request.query);
    const documents = [...ctx.state.documents.values()].filter(
      (r) =>
        (query.businessId === undefined || r.view.businessId === query.businessId) &&
        (query.traderInvoiceNumber === undefined || r.view.traderInvoiceNumber === query.traderInvoiceNumber) &&
        (query.type === undefined || r.view.type === query.type),
    );
    return { documents: documents.map(inspected) };
  });

  app.get(at('/documents/:id'), async (request) => ({ document: inspected(documentById(request.params)) }));

  app.post(at('/documents/:id/settle'), async (request) => {
    const body = parseBody(SettleBody, request.body);
    const record = documentById(request.params);
    const causes = body.outcome === 'failed' ? [causeFor(body.errorCode ?? 'authority_rejected', body.message)] : [];
    if (!ctx.filing.settle(record, body.outcome, causes)) {
      throw new ComplianceHttpError(
        409,
        'not_in_flight',
        `Document ${record.view.id} is ${record.view.status}, not in flight`,
      );
    }
    return { document: inspected(record) };
  });

  app.post(at('/documents/:id/cancel'), async (request) => {
    const record = documentById(request.params);
    if (!ctx.filing.cancel(record)) {
      const message = `Document ${record.view.id} is ${record.view.status}; only in-flight or failed documents can be cancelled`;
      throw new ComplianceHttpError(409, 'not_cancellable', message);
    }
    return { document: inspected(record) };
  });

  app.get(at('/stock/movements'), async (request) => {
    const query = parseQuery(MovementsQuery, request.query);
    const movements = ctx.state.movements.filter(
      (m) =>
        (query.businessId === undefined || m.businessId === query.businessId) &&
        (query.branchId === undefined || m.branchId === query.branchId) &&
        (query.itemId === undefined || m.itemId === query.itemId) &&
        (query.referenceId === undefined || m.referenceId === query.referenceId) &&
        (query.referencePrefix === undefined || (m.referenceId ?? '').startsWith(query.referencePrefix)),
    );
    return { movements: movements.map((m) => ({ ...m })) };
  });

  app.get(at('/stock/levels'), async (request) => {
    const { businessId } = parseQuery(LevelsQuery, request.query);
    if (!ctx.state.businesses.has(businessId)) throw notFound(`Business ${businessId}`);
    return { levels: ctx.state.stockLevels(businessId) };
  });

  app.get(at('/callbacks'), async (request) => {
    const { documentId } = parseQuery(CallbacksQuery, request.query);
    return { attempts: ctx.callbacks.attempts(documentId) };
  });

  app.get(at('/requests'), async () => ({ ...ctx.stats.snapshot(), faultsInjected: ctx.faults.injectedCounts() }));

  app.get(at('/requests/log'), async (request) => {
    const query = parseQuery(RequestLogQuery, request.query);
    return { requests: ctx.stats.records(query) };
  });

  app.get(at('/items/records'), async (request) => {
    const { businessId } = parseQuery(LevelsQuery, request.query);
    const items = ctx.state.itemsOf(businessId).map((item) => ({
      id: item.view.id,
      externalId: item.view.externalId,
      registrationStatus: item.view.registrationStatus,
      creations: ctx.state.creationsOf(businessId, item.view.externalId),
      registrations: item.registrations,
    }));
    return { items };
  });

  app.post(at('/items/:id/fix'), async (request) => {
    const item = ctx.state.items.get(pathId(request.params));
    if (!item) throw notFound(`Item ${pathId(request.params)}`);
    // As if the missing parts were filled in on the dashboard.
    item.view.productTypeCode ??= '2';
    item.view.classificationCode ??= '5022110000';
    item.view.needs = computeNeeds(item.view);
    return { item: snapshot(item.view) };
  });

  app.get(at('/faults'), async () => ({ faults: ctx.faults.list() }));
  app.post(at('/faults'), async (request, reply) => {
    const rule = parseBody(FaultRuleSchema, request.body);
    return reply.code(201).send({ fault: ctx.faults.add(rule) });
  });
  app.delete(at('/faults'), async () => {
    ctx.faults.clear();
    return { faults: [] };
  });
  app.delete(at('/faults/:id'), async (request) => {
    if (!ctx.faults.remove(pathId(request.params))) throw notFound(`Fault ${pathId(request.params)}`);
    return { removed: pathId(request.params) };
  });

  // The sandbox-wide control point: outages of both services are listed and managed here.
  app.get(at('/outages'), async () => ({ outages: ctx.outages.list() }));
  app.post(at('/outages'), async (request, reply) => {
    const input = parseBody(OutageSchema, request.body);
    try {
      return reply.code(201).send({ outage: ctx.outages.add(input, { defaultService: 'compliance' }) });
    } catch (err) {
      if (err instanceof OutageError) throw invalidRequest({ field: err.field, message: err.reason });
      throw err;
    }
  });
  app.delete(at('/outages'), async () => {
    ctx.outages.clear();
    return { outages: ctx.outages.list() };
  });
  app.delete(at('/outages/:id'), async (request) => {
    if (!ctx.outages.remove(pathId(request.params))) throw notFound(`Outage ${pathId(request.params)}`);
    return { removed: pathId(request.params) };
  });

  app.get(at('/authority/item-needs'), async () => ({ rules: ctx.authority.itemNeedsRules() }));
  app.post(at('/authority/item-needs'), async (request, reply) => {
    const rule = parseBody(ItemNeedsRuleSchema, request.body);
    return reply.code(201).send({ rule: ctx.authority.addItemNeedsRule(rule) });
  });
  app.delete(at('/authority/item-needs'), async () => {
    ctx.authority.clearItemNeedsRules();
    return { rules: ctx.authority.itemNeedsRules() };
  });

  app.get(at('/authority/rules'), async () => ({ rules: ctx.authority.rules() }));
  app.post(at('/authority/rules'), async (request, reply) => {
    const rule = parseBody(AuthorityRuleSchema, request.body);
    return reply.code(201).send({ rule: ctx.authority.addRule(rule) });
  });
  app.delete(at('/authority/rules'), async () => {
    ctx.authority.clearRuntimeRules();
    return { rules: ctx.authority.rules() };
  });
  app.delete(at('/authority/rules/:id'), async (request) => {
    if (!ctx.authority.removeRule(pathId(request.params))) throw notFound(`Rule ${pathId(request.params)}`);
    return { removed: pathId(request.params) };
  });

  app.post(at('/reset'), async () => {
    ctx.reset();
    return { reset: true };
  });
}
