import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createServiceApp } from '../shared/fastify.js';
import type { FaultEngine } from '../shared/faults.js';
import { OutageSchedule } from '../shared/outages.js';
import type { RequestStats } from '../shared/request-stats.js';
import { authenticate } from './auth.js';
import { createContext } from './context.js';
import { complianceErrorBody, installErrorHandling } from './errors.js';
import type { ComplianceFixture } from './fixture-schema.js';
import { inspectionRoutes } from './inspect.js';
import { installJsonBodyParser } from './json-body.js';
import { creditNoteRoutes } from './routes/credit-notes.js';
import { identityRoutes } from './routes/identity.js';
import { itemRoutes } from './routes/items.js';
import { lookupRoutes } from './routes/lookups.js';
import { purchaseRoutes } from './routes/purchases.js';
import { salesRoutes } from './routes/sales.js';
import { stockRoutes } from './routes/stock.js';

export interface ComplianceAppOptions {
  fixture: ComplianceFixture;
  faults: FaultEngine;
  /** Outages, usually shared with the accounting sandbox; default: a schedule of this app's own, with none. */
  outages?: OutageSchedule;
  stats: RequestStats;
  logger: Logger | false;
  /** Clock for windows, keys' expiry and timestamps. */
  now?: () => number;
  /** Called by POST /__sandbox/reset once the compliance state is back to the fixture. */
  onReset?: () => void;
}

/** The compliance service sandbox (not listening): the /v1 API behind keys, inspection under /__sandbox. */
export async function buildComplianceApp(options: ComplianceAppOptions): Promise<FastifyInstance> {
  const now = options.now ?? Date.now;
  const app = createServiceApp(options.logger);
  const outages = options.outages ?? new OutageSchedule({ now });
  const ctx = createContext({
    fixture: options.fixture,
    faults: options.faults,
    outages,
    stats: options.stats,
    now,
    logger: options.logger || undefined,
    ...(options.onReset ? { onReset: options.onReset } : {}),
  });

  installErrorHandling(app);
  installJsonBodyParser(app);
  // Stats first, so requests an outage or a fault drops are still counted; an outage answers before any fault. All
  // three skip /__sandbox.
  options.stats.install(app, 'compliance');
  outages.install(app, 'compliance', complianceErrorBody);
  options.faults.install(app, 'compliance', complianceErrorBody);
  app.addHook(
    'onRequest',
    authenticate({
      state: ctx.state,
      limiter: ctx.limiter,
      stats: options.stats,
      windowMs: options.fixture.rateLimitWindowMs,
      now,
    }),
  );
  app.addHook('onClose', async () => {
    await ctx.close();
    // A schedule passed in belongs to the caller, who may still use it.
    if (outages !== options.outages) outages.close();
  });

  identityRoutes(app, ctx);
  itemRoutes(app, ctx);
  stockRoutes(app, ctx);
  salesRoutes(app, ctx);
  creditNoteRoutes(app, ctx);
  purchaseRoutes(app, ctx);
  lookupRoutes(app);
  inspectionRoutes(app, ctx);
  return app;
}
