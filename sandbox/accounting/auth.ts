import type { FastifyRequest } from 'fastify';
import type { RequestStats } from '../shared/request-stats.js';
import { unauthorized } from './errors.js';
import type { AccountingApplication } from './fixture.js';
import { rawBodyOf } from './raw-body.js';
import { checkRequestSignature } from './signature.js';
import type { AccountingState } from './state.js';

const authenticated = new WeakMap<FastifyRequest, AccountingApplication>();

/** The application whose key authenticated this request; only valid inside authenticated routes. */
export function applicationOf(request: FastifyRequest): AccountingApplication {
  const application = authenticated.get(request);
  if (!application) throw new Error('applicationOf called on an unauthenticated request');
  return application;
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The accounting authentication: `X-API-Key` of an active application, and, when either signature
 * header is present, a valid signature (both headers required, A12). Runs after body parsing because
 * the signature covers the body bytes.
 */
export function authenticate(state: AccountingState, stats: RequestStats, now: () => number) {
  return async (request: FastifyRequest): Promise<void> => {
    const apiKey = singleHeader(request, 'x-api-key');
    if (!apiKey) throw unauthorized('Missing API key (header X-API-Key)');
    const application = state.applicationForKey(apiKey);
    if (!application) throw unauthorized('Invalid API key');
    if (!application.active) throw unauthorized('Application is inactive');

    const timestampHeader = singleHeader(request, 'x-timestamp');
    const signatureHeader = singleHeader(request, 'x-signature');
    if (timestampHeader !== undefined || signatureHeader !== undefined) {
      if (timestampHeader === undefined || signatureHeader === undefined) {
        throw unauthorized('Signed requests need both X-Signature and X-Timestamp');
      }
      const check = checkRequestSignature(
        { method: request.method, url: request.url, rawBody: rawBodyOf(request), timestampHeader, signatureHeader },
        application.clientSecrets,
        { now: now(), signQuery: state.signQuery },
      );
      if (!check.ok) throw unauthorized(check.reason);
    }
    authenticated.set(request, application);
    stats.tag(request, application.id);
  };
}
