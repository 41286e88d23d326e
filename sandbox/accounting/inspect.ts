import type { FastifyInstance } from 'fastify';
import { OutageSchema } from '../shared/outage-schema.js';
import { OutageError, type OutageInput, type OutageSchedule } from '../shared/outages.js';
import { badRequest, notFound } from './errors.js';
import type { AccountingState } from './state.js';
import type { WebhookDispatcher } from './webhooks.js';

const INSPECTION_PREFIX = '/__sandbox';

function optionalString(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function webhookUrl(body: unknown): string | null {
  const url = (body as { url?: unknown } | undefined)?.url;
  if (url === null) return null;
  if (typeof url === 'string' && URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)) return url;
  throw badRequest('url must be an absolute http(s) URL, or null to stop deliveries');
}

/**
 * The accounting sandbox's inspection API (no key, never faulted, not counted): what tests and demos
 * look at to see the effect of a call, where the webhook URL of an application is set, the accounting service's
 * outages, plus a reset back to the fixture.
 */
export function inspectionRoutes(
  app: FastifyInstance,
  state: AccountingState,
  webhooks: WebhookDispatcher,
  outages: OutageSchedule,
): void {
  app.get(`${INSPECTION_PREFIX}/sync-batches`, async (request) => {
    const companyId = optionalString(request.query, 'companyId');
    return { data: state.allSyncBatches().filter((s) => companyId === undefined || s.companyId === companyId) };
  });

  app.get(`${INSPECTION_PREFIX}/bill-payments`, async (request) => {
    const companyId = optionalString(request.query, 'companyId');
    const status = optionalString(request.query, 'status');
    const syncBatchId = optionalString(request.query, 'syncBatchId');
    return {
      data: state
        .allBillPayments()
        .filter(
          (b) =>
            (companyId === undefined || b.companyId === companyId) &&
            (status === undefined || b.status === status) &&
            (syncBatchId === undefined || b.syncBatchId === syncBatchId),
        ),
    };
  });

  app.get(`${INSPECTION_PREFIX}/webhooks`, async (request) => {
    const syncBatchId = optionalString(request.query, 'syncBatchId');
    const billPaymentId = optionalString(request.query, 'billPaymentId');
    return {
      attempts: webhooks.attempts({
        ...(syncBatchId === undefined ? {} : { syncBatchId }),
        ...(billPaymentId === undefined ? {} : { billPaymentId }),
      }),
    };
  });

  app.get(`${INSPECTION_PREFIX}/webhook-endpoints`, async () => ({ endpoints: webhooks.endpointList() }));

  app.put<{ Params: { applicationId: string } }>(
    `${INSPECTION_PREFIX}/webhook-endpoints/:applicationId`,
    async (request) => {
      const { applicationId } = request.params;
      if (!webhooks.hasApplication(applicationId)) throw notFound(`Application ${applicationId} not found`);
      const url = webhookUrl(request.body);
      webhooks.setEndpoint(applicationId, url);
      return { applicationId, url };
    },
  );

  // Only this service's outages: the compliance inspection API is where both services' are managed.
  app.get(`${INSPECTION_PREFIX}/outages`, async () => ({ outages: outages.list('accounting') }));
  app.post(`${INSPECTION_PREFIX}/outages`, async (request, reply) => {
    const input = accountingOutage(request.body);
    try {
      return reply.code(201).send({ outage: outages.add(input, { defaultService: 'accounting' }) });
    } catch (err) {
      if (err instanceof OutageError) throw badRequest(err.message);
      throw err;
    }
  });
  app.delete(`${INSPECTION_PREFIX}/outages`, async () => {
    outages.clear('accounting');
    return { outages: outages.list('accounting') };
  });
  app.delete<{ Params: { id: string } }>(`${INSPECTION_PREFIX}/outages/:id`, async (request) => {
    const { id } = request.params;
    if (outages.get(id)?.service !== 'accounting' || !outages.remove(id)) throw notFound(`Outage ${id} not found`);
    return { removed: id };
  });

  app.post(`${INSPECTION_PREFIX}/reset`, async () => {
    state.reset();
    webhooks.reset();
    outages.reset('accounting');
    return { reset: true };
  });
}

/** A valid outage of this service, or a 400 naming the first wrong field. */
function accountingOutage(body: unknown): OutageInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  const parsed = OutageSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') || 'body';
    throw badRequest(`${field}: ${issue?.message ?? 'is invalid'}`);
  }
  if (parsed.data.kind === 'authority') {
    throw badRequest('kind: the accounting service has no tax authority; add authority outages on the compliance port');
  }
  if (parsed.data.service === 'compliance') {
    throw badRequest('service: add outages of the compliance service on the compliance port');
  }
  return parsed.data;
}
