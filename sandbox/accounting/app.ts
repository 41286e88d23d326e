import type { FastifyInstance } from 'fastify';
import type pino from 'pino';
import { createServiceApp } from '../shared/fastify.js';
import type { FaultEngine } from '../shared/faults.js';
import { OutageSchedule } from '../shared/outages.js';
import type { RequestStats } from '../shared/request-stats.js';
import { authenticate } from './auth.js';
import { accountingErrorBody, installErrorHandling } from './errors.js';
import type { AccountingFixture } from './fixture.js';
import { inspectionRoutes } from './inspect.js';
import { installRawBodyParsers } from './raw-body.js';
import { billPaymentRoutes } from './routes/bill-payments.js';
import { companiesRoutes } from './routes/companies.js';
import { syncRoutes } from './routes/sync.js';
import { AccountingState } from './state.js';
import { WebhookDispatcher } from './webhooks.js';

export interface AccountingAppOptions {
  fixture: AccountingFixture;
  faults: FaultEngine;
  /** Outages, usually shared with the compliance sandbox; default: a schedule of this app's own, with none. */
  outages?: OutageSchedule;
  stats: RequestStats;
  logger: pino.Logger | false;
  /** Clock for signature tolerance and timestamps; tests move it. */
  now?: () => number;
}

/** Bodies over 1 MiB are refused with 413 (A2). */
/** The accounting service sandbox (not listening): API routes behind the key, inspection under /__sandbox. */
export async function buildAccountingApp(options: AccountingAppOptions): Promise<FastifyInstance> {
  const now = options.now ?? Date.now;
  const state = new AccountingState(options.fixture, now);
  const webhooks = new WebhookDispatcher({
    config: options.fixture.webhooks,
    applications: options.fixture.applications,
    faults: options.faults,
    now,
  });
  state.onPaymentStatusChange((change) => webhooks.statusChanged(change));
  const app = createServiceApp(options.logger);
  const outages = options.outages ?? new OutageSchedule({ now });

  installErrorHandling(app);
  installRawBodyParsers(app);
  // Before any route, so their hooks wrap every API route; stats first, so what an outage or a fault drops is still
  // counted. All three skip the inspection prefix themselves.
  options.stats.install(app, 'accounting');
  outages.install(app, 'accounting', accountingErrorBody);
  options.faults.install(app, 'accounting', accountingErrorBody);
  app.addHook('onClose', async () => {
    state.close();
    await webhooks.close();
    // A schedule passed in belongs to the caller, who may still use it.
    if (outages !== options.outages) outages.close();
  });

  await app.register(async (api) => {
    api.addHook('preHandler', authenticate(state, options.stats, now));
    companiesRoutes(api);
    billPaymentRoutes(api, state);
    syncRoutes(api, state);
  });
  inspectionRoutes(app, state, webhooks, outages);
  return app;
}
