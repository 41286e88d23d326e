import type { FastifyInstance } from 'fastify';
import { callerOf, mayActFor } from '../auth.js';
import type { ComplianceContext } from '../context.js';
import type { BusinessRecord } from '../state.js';

function businessView(business: BusinessRecord) {
  return {
    id: business.id,
    name: business.name,
    pin: business.pin,
    environment: business.environment,
    branches: business.branches.map((b) => ({ id: b.id, name: b.name, authorityBhfId: b.authorityBhfId })),
  };
}

/** GET /v1/identity (C20) and GET /v1/businesses (C19): any valid key, no scope (C39). */
export function identityRoutes(app: FastifyInstance, ctx: ComplianceContext): void {
  app.get('/v1/identity', async (request) => {
    const { key, application } = callerOf(request);
    return {
      data: {
        application: { id: application.id, name: application.name, rateLimitPerMinute: application.requestsPerMinute },
        apiKey: { id: key.id, environment: key.environment, scopes: [...key.scopes], businessId: key.businessId },
      },
    };
  });

  app.get('/v1/businesses', async (request) => {
    const { key } = callerOf(request);
    const businesses = [...ctx.state.businesses.values()].filter((business) => mayActFor(key, business));
    return { data: { businesses: businesses.map(businessView) } };
  });
}
