import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { FixedWindowRateLimiter } from '../shared/rate-limiter.js';
import type { RequestStats } from '../shared/request-stats.js';
import { ComplianceHttpError, forbidden, invalidRequest } from './errors.js';
import { API_KEY_PATTERN, type ApplicationFixture, type Scope } from './fixture-schema.js';
import { INSPECTION_PREFIX } from './inspection-types.js';
import type { BusinessRecord, ComplianceState, KeyRecord } from './state.js';

export interface Caller {
  key: KeyRecord;
  application: ApplicationFixture;
}

const callers = new WeakMap<FastifyRequest, Caller>();

/** The authenticated caller of an API route (set by the authentication hook). */
export function callerOf(request: FastifyRequest): Caller {
  const caller = callers.get(request);
  if (!caller) throw new Error(`no authenticated caller for ${request.method} ${request.url}`);
  return caller;
}

// One message for every cause, so a 401 never tells which (compliance-api.md, Authentication 5).
const INVALID_KEY = () => new ComplianceHttpError(401, 'invalid_api_key', 'The API key is missing or not valid');

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header.trim();
  const authorization = request.headers.authorization;
  const match = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}

function windowText(windowMs: number): string {
  return windowMs === 60_000 ? 'minute' : `${windowMs / 1000} s window`;
}

/**
 * The key check and rate limit of every API route (C39, C43, C44): 401 for any unusable key (not
 * counted), then one count against the application's window. The three X-RateLimit-* headers go on
 * every answer after that, errors included; a refused request is 429 with Retry-After.
 */
export function authenticate(options: {
  state: ComplianceState;
  limiter: FixedWindowRateLimiter;
  stats: RequestStats;
  windowMs: number;
  now: () => number;
}): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // Unknown routes answer 404 whatever the key; the inspection API needs none.
    const route = request.routeOptions.url;
    if (route === undefined || route.startsWith(INSPECTION_PREFIX)) return;

    const value = presentedKey(request);
    if (value === undefined || !API_KEY_PATTERN.test(value)) throw INVALID_KEY();
    const key = options.state.keys.get(value);
    const application = key ? options.state.applications.get(key.applicationId) : undefined;
    if (!key || !application || key.revoked || application.suspended) throw INVALID_KEY();
    if (key.expiresAt !== null && key.expiresAt <= options.now()) throw INVALID_KEY();

    callers.set(request, { key, application });
    options.stats.tag(request, application.id);
    const decision = options.limiter.take(application.id, application.requestsPerMinute);
    reply.headers({
      'x-ratelimit-limit': String(decision.limit),
      'x-ratelimit-remaining': String(decision.remaining),
      'x-ratelimit-reset': String(decision.resetSeconds),
    });
    if (!decision.allowed) {
      throw new ComplianceHttpError(
        429,
        'rate_limited',
        `Rate limit of ${decision.limit} requests per ${windowText(options.windowMs)} exceeded; retry in ${decision.retryAfterSeconds} s`,
        {},
        { 'retry-after': String(decision.retryAfterSeconds) },
      );
    }
  };
}

/** Route hook: 403 unless the key has `scope`. */
export function requireScope(scope: Scope): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    if (!callerOf(request).key.scopes.has(scope)) throw forbidden(`The API key lacks the ${scope} scope`);
  };
}

function environmentOf(key: KeyRecord): BusinessRecord['environment'] {
  return key.environment === 'live' ? 'production' : 'sandbox';
}

/** Whether the key may act for the business (bound business, same application, same environment). */
export function mayActFor(key: KeyRecord, business: BusinessRecord): boolean {
  if (business.applicationId !== key.applicationId) return false;
  if (key.businessId !== null && key.businessId !== business.id) return false;
  return business.environment === environmentOf(key);
}

/**
 * The business a request acts for (C40–C42): `businessId` from the query (or, where an operation allows,
 * the body), required for organisation-wide keys. A business outside the key's reach is 403 whether or
 * not it exists, so the answer never reveals other organisations' businesses.
 */
export function resolveBusiness(
  state: ComplianceState,
  request: FastifyRequest,
  fallbackBusinessId?: string,
): BusinessRecord {
  const { key } = callerOf(request);
  const query = (request.query ?? {}) as Record<string, unknown>;
  const raw = query.businessId;
  if (raw !== undefined && (typeof raw !== 'string' || raw === '')) {
    throw invalidRequest({ field: 'businessId', message: 'must be a non-empty string given once' });
  }
  const requested = (raw as string | undefined) ?? fallbackBusinessId;
  if (key.businessId !== null) {
    if (requested !== undefined && requested !== key.businessId) {
      throw forbidden('The API key is limited to another business');
    }
  } else if (requested === undefined) {
    throw invalidRequest({ field: 'businessId', message: 'is required with an organisation-wide API key' });
  }
  const businessId = key.businessId ?? (requested as string);
  const business = state.businesses.get(businessId);
  if (!business || business.applicationId !== key.applicationId) {
    throw forbidden('The API key cannot act for this business');
  }
  if (business.environment !== environmentOf(key)) {
    throw forbidden(
      key.environment === 'test'
        ? 'A test key (cmp_sk_test_) cannot act for a production business'
        : 'A live key (cmp_sk_live_) cannot act for a sandbox business',
    );
  }
  return business;
}
