import type { FastifyInstance } from 'fastify';
import type { AccountingState } from './state.js';

const INSPECTION_PREFIX = '/__sandbox';

function optionalString(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The accounting sandbox's inspection API (no key, never faulted, not counted): what tests and demos
 * look at to see the effect of a call, plus a reset back to the fixture.
 */
export function inspectionRoutes(app: FastifyInstance, state: AccountingState): void {
  app.get(`${INSPECTION_PREFIX}/sync-batches`, async (request) => {
    const companyId = optionalString(request.query, 'companyId');
    return { data: state.allSyncBatches().filter((s) => companyId === undefined || s.companyId === companyId) };
  });

  app.get(`${INSPECTION_PREFIX}/bill-payments`, async (request) => {
    const companyId = optionalString(request.query, 'companyId');
    const status = optionalString(request.query, 'status');
    return {
      data: state
        .allBillPayments()
        .filter((b) => (companyId === undefined || b.companyId === companyId) && (status === undefined || b.status === status)),
    };
  });

  app.post(`${INSPECTION_PREFIX}/reset`, async () => {
    state.reset();
    return { reset: true };
  });
}
