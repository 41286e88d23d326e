import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isValidRegex } from './regex.js';

export type SandboxService = 'compliance' | 'accounting';

const FAULT_KINDS = [
  'latency',
  'error',
  'reset',
  'commit-then-fail',
  'rate-limit',
  'callback-duplicate',
  'callback-delay',
  'callback-out-of-order',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const REGEX_PREFIX = 're:';

export const FaultRuleSchema = z.strictObject({
  id: z.string().min(1).optional(),
  /** Absent: both services. */
  service: z.enum(['compliance', 'accounting']).optional(),
  /** Absent: any method. */
  method: z
    .string()
    .regex(/^[A-Za-z]+$/, 'must be an HTTP method name')
    .transform((m) => m.toUpperCase())
    .optional(),
  /** Route pattern ('/v1/sales/:id/retry'), concrete path ('/v1/sales/abc/retry') or 're:<regex>' on the path. */
  path: z
    .string()
    .min(1)
    .refine(
      (p) => !p.startsWith(REGEX_PREFIX) || isValidRegex(p.slice(REGEX_PREFIX.length)),
      'is not a valid regular expression',
    )
    .optional(),
  kind: z.enum(FAULT_KINDS),
  status: z.number().int().min(400).max(599).optional(),
  failWith: z.enum(['error', 'reset']).optional(),
  delayMs: z.number().int().min(0).optional(),
  retryAfterSeconds: z.number().int().min(0).optional(),
  limit: z.number().int().min(0).optional(),
  duplicates: z.number().int().min(1).optional(),
  times: z.number().int().min(1).optional(),
  probability: z.number().min(0).max(1).optional(),
});

export type FaultRule = z.output<typeof FaultRuleSchema>;
export type FaultRuleInput = z.input<typeof FaultRuleSchema>;

/** Builds an error body in a service's own error shape. */
export type ServiceErrorBody = (status: number, code: string, message: string) => unknown;

export interface CallbackFaultPlan {
  /** Extra copies of the delivery to send. */
  duplicates: number;
  /** Extra wait before the first attempt. */
  delayMs: number;
  /** Deliver after a later callback of the same document. */
  outOfOrder: boolean;
}

const DEFAULT_ERROR_STATUS = 503;
const DEFAULT_RETRY_AFTER_SECONDS = 1;
const DEFAULT_RATE_LIMIT = 120;
const DEFAULT_SKIP_PREFIX = '/__sandbox';

/** What the answer to a faulted request becomes once the handler has run. */
type AfterHandler = { failWith: 'error'; status: number } | { failWith: 'reset' };

const CALLBACK_KINDS: ReadonlySet<FaultKind> = new Set([
  'callback-duplicate',
  'callback-delay',
  'callback-out-of-order',
]);
const ANSWERING_KINDS: ReadonlySet<FaultKind> = new Set(['error', 'reset', 'rate-limit', 'commit-then-fail']);

/**
 * Injects failures into the sandbox services, by rules that can be added and removed at run time.
 * Rules are tried in the order they were added: every matching latency rule adds its delay, and the
 * first matching rule that answers (error, reset, rate-limit, commit-then-fail) decides the answer.
 * A rule with `times` is removed once it has been applied that many times.
 */
export class FaultEngine {
  private rules: FaultRule[] = [];
  private nextId = 1;
  private readonly random: () => number;
  private readonly counts: Record<FaultKind, number> = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<
    FaultKind,
    number
  >;
  private readonly pendingAfterHandler = new WeakMap<FastifyRequest, AfterHandler>();

  constructor(rules: FaultRuleInput[] = [], random: () => number = Math.random) {
    this.random = random;
    for (const rule of rules) this.add(rule);
  }

  /** Validates the rule (throws a ZodError naming the wrong field) and adds it; a rule with a known id replaces it. */
  add(input: FaultRuleInput): FaultRule {
    const parsed = FaultRuleSchema.parse(input);
    const rule: FaultRule = { ...parsed, id: parsed.id ?? this.freshId() };
    const existing = this.rules.findIndex((r) => r.id === rule.id);
    if (existing >= 0) this.rules[existing] = rule;
    else this.rules.push(rule);
    return { ...rule };
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length !== before;
  }

  clear(): void {
    this.rules = [];
  }

  /** The active rules; `times` shows how many applications are left. */
  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** How many faults of each kind were injected since the engine was created. */
  injectedCounts(): Record<string, number> {
    return { ...this.counts };
  }

  /**
   * Adds fastify hooks that apply the request rules of `service`. Install RequestStats first: a
   * request whose connection is dropped here never reaches hooks added after this one.
   */
  install(
    app: FastifyInstance,
    service: SandboxService,
    errorBody: ServiceErrorBody,
    options: { skipPrefix?: string } = {},
  ): void {
    const skipPrefix = options.skipPrefix ?? DEFAULT_SKIP_PREFIX;

    app.addHook('onRequest', async (request, reply) => {
      const path = urlPath(request.url);
      if (isUnder(path, skipPrefix)) return;
      const route = request.routeOptions.url;
      let latencyMs = 0;
      let answer: FaultRule | undefined;
      for (const rule of [...this.rules]) {
        if (CALLBACK_KINDS.has(rule.kind) || (answer && ANSWERING_KINDS.has(rule.kind))) continue;
        if (!matchesRequest(rule, service, request.method, route, path) || !this.fires(rule)) continue;
        if (rule.kind === 'latency') latencyMs += rule.delayMs ?? 0;
        else answer = rule;
      }
      if (latencyMs > 0) await delay(latencyMs);
      if (!answer) return;

      switch (answer.kind) {
        case 'error': {
          const status = answer.status ?? DEFAULT_ERROR_STATUS;
          return sendError(reply, errorBody, status);
        }
        case 'rate-limit': {
          const retryAfter = answer.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
          return reply
            .code(429)
            .headers({
              'retry-after': String(retryAfter),
              'x-ratelimit-limit': String(answer.limit ?? DEFAULT_RATE_LIMIT),
              'x-ratelimit-remaining': '0',
              'x-ratelimit-reset': String(retryAfter),
            })
            .send(errorBody(429, 'rate_limited', `Rate limit exceeded; retry in ${retryAfter} s`));
        }
        case 'reset':
          // Hijacking stops fastify (and every later hook) from touching the request again.
          reply.hijack();
          request.raw.socket.destroy();
          return;
        case 'commit-then-fail':
          this.pendingAfterHandler.set(
            request,
            answer.failWith === 'reset'
              ? { failWith: 'reset' }
              : { failWith: 'error', status: answer.status ?? DEFAULT_ERROR_STATUS },
          );
          return;
      }
    });

    app.addHook('onSend', async (request, reply, payload) => {
      const after = this.pendingAfterHandler.get(request);
      if (!after) return payload;
      this.pendingAfterHandler.delete(request);
      if (after.failWith === 'reset') {
        // Nothing has been written yet (headers go out after onSend), so the client gets no answer at
        // all. The promise never settles so fastify never writes or finishes the answer: the response
        // ends as a dropped connection, as RequestStats must see it. It is unreachable once the socket
        // is gone, so it is garbage-collected with the request.
        request.raw.socket.destroy();
        return new Promise<never>(() => {});
      }
      reply.code(after.status);
      for (const header of ['location', 'idempotent-replayed', 'content-length', 'content-disposition']) {
        reply.removeHeader(header);
      }
      reply.header('content-type', 'application/json; charset=utf-8');
      return JSON.stringify(errorBody(after.status, errorCode(after.status), errorMessage(after.status)));
    });
  }

  /**
   * Consumes the matching callback rules for one delivery. Method and path do not apply to callbacks;
   * `service` (default compliance, the service that sends callbacks) filters rules that name one.
   */
  callbackPlan(service: SandboxService = 'compliance'): CallbackFaultPlan {
    const plan: CallbackFaultPlan = { duplicates: 0, delayMs: 0, outOfOrder: false };
    for (const rule of [...this.rules]) {
      if (!CALLBACK_KINDS.has(rule.kind)) continue;
      if (rule.service !== undefined && rule.service !== service) continue;
      if (!this.fires(rule)) continue;
      if (rule.kind === 'callback-duplicate') plan.duplicates += rule.duplicates ?? 1;
      else if (rule.kind === 'callback-delay') plan.delayMs += rule.delayMs ?? 0;
      else plan.outOfOrder = true;
    }
    return plan;
  }

  /** Rolls the rule's probability; when it fires, counts it and uses up one of its `times`. */
  private fires(rule: FaultRule): boolean {
    const probability = rule.probability ?? 1;
    if (probability < 1 && !(this.random() < probability)) return false;
    this.counts[rule.kind] += 1;
    if (rule.times !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) this.rules = this.rules.filter((r) => r !== rule);
    }
    return true;
  }

  private freshId(): string {
    let id: string;
    do id = `fault-${this.nextId++}`;
    while (this.rules.some((r) => r.id === id));
    return id;
  }
}

/**
 * A reproducible source of fault rolls (mulberry32): the same seed gives the same sequence of numbers in [0, 1),
 * so a run that found a problem can be repeated with the same rolls. Not for anything secret.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function sendError(reply: FastifyReply, errorBody: ServiceErrorBody, status: number): FastifyReply {
  return reply.code(status).send(errorBody(status, errorCode(status), errorMessage(status)));
}

function errorCode(status: number): string {
  return status === 503 ? 'service_unavailable' : 'internal_error';
}

function errorMessage(status: number): string {
  return status === 503 ? 'The service is temporarily unavailable' : 'The service failed to process the request';
}

function matchesRequest(
  rule: FaultRule,
  service: SandboxService,
  method: string,
  route: string | undefined,
  path: string,
): boolean {
  if (rule.service !== undefined && rule.service !== service) return false;
  if (rule.method !== undefined && rule.method !== method.toUpperCase()) return false;
  if (rule.path === undefined) return true;
  if (rule.path.startsWith(REGEX_PREFIX)) return new RegExp(rule.path.slice(REGEX_PREFIX.length)).test(path);
  return rule.path === route || rule.path === path;
}

export function urlPath(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function isUnder(path: string, prefix: string): boolean {
  return prefix !== '' && (path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`));
}
