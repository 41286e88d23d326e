import type { FastifyInstance } from 'fastify';
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
 * look at to see the effect of a call, where the webhook URL of an application is set, plus a reset back
 * to the fixture.
 */
export function inspectionRoutes(app: FastifyInstance, state: AccountingState, webhooks: WebhookDispatcher): void {
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

  app.post(`${INSPECTION_PREFIX}/reset`, async () => {
    state.reset();
    webhooks.reset();
    return { reset: true };
  });
}
