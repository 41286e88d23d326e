import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUnder, type SandboxService } from './faults.js';

export interface RequestRecord {
  /** When the request arrived, epoch ms. */
  at: number;
  service: SandboxService;
  method: string;
  /** Route pattern, e.g. '/v1/sales/:id'; NO_ROUTE when nothing matched. */
  route: string;
  path: string;
  /** HTTP status answered; 0 when the connection was dropped without an answer. */
  status: number;
  applicationId?: string;
}

export interface RouteSummary {
  service: string;
  method: string;
  route: string;
  count: number;
  statuses: Record<string, number>;
}

export interface RequestStatsSnapshot {
  total: number;
  rateLimited: number;
  routes: RouteSummary[];
}

export const NO_ROUTE = '(no route)';
const DEFAULT_MAX_RECORDS = 20_000;
const DEFAULT_SKIP_PREFIX = '/__sandbox';

interface InFlight {
  record: Omit<RequestRecord, 'status'>;
  finished: boolean;
}

/**
 * Counts the requests each sandbox service answered, for the inspection API and tests: totals per
 * route and status since the last reset, and the latest `maxRecords` requests one by one.
 */
export class RequestStats {
  private readonly maxRecords: number;
  private ring: RequestRecord[] = [];
  private ringStart = 0;
  private total = 0;
  private rateLimited = 0;
  private readonly routes = new Map<string, RouteSummary>();
  private readonly inFlight = new WeakMap<FastifyRequest, InFlight>();

  constructor(options: { maxRecords?: number } = {}) {
    const max = options.maxRecords ?? DEFAULT_MAX_RECORDS;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxRecords must be a positive integer, got ${max}`);
    this.maxRecords = max;
  }

  /**
   * Adds the hooks that record every request of `service` outside `skipPrefix`. Install before the
   * FaultEngine, so requests whose connection a fault drops are seen too (recorded with status 0).
   */
  install(app: FastifyInstance, service: SandboxService, options: { skipPrefix?: string } = {}): void {
    const skipPrefix = options.skipPrefix ?? DEFAULT_SKIP_PREFIX;

    app.addHook('onRequest', async (request, reply) => {
      const entry = this.track(request, service, skipPrefix);
      if (!entry) return;
      // onResponse never runs when the socket is destroyed before an answer was written.
      reply.raw.once('close', () => this.finish(request, reply, 0));
    });

    app.addHook('onResponse', async (request, reply) => {
      this.track(request, service, skipPrefix);
      this.finish(request, reply, reply.statusCode);
    });
  }

  /** Attributes the request to an application; called by the app once the caller is authenticated. */
  tag(request: FastifyRequest, applicationId: string): void {
    const entry = this.inFlight.get(request);
    if (entry) entry.record.applicationId = applicationId;
  }

  snapshot(): RequestStatsSnapshot {
    return {
      total: this.total,
      rateLimited: this.rateLimited,
      routes: [...this.routes.values()].map((r) => ({ ...r, statuses: { ...r.statuses } })),
    };
  }

  /** The retained records, oldest first. */
  records(filter: { since?: number; service?: string; applicationId?: string } = {}): RequestRecord[] {
    const ordered = [...this.ring.slice(this.ringStart), ...this.ring.slice(0, this.ringStart)];
    return ordered
      .filter(
        (r) =>
          (filter.since === undefined || r.at >= filter.since) &&
          (filter.service === undefined || r.service === filter.service) &&
          (filter.applicationId === undefined || r.applicationId === filter.applicationId),
      )
      .map((r) => ({ ...r }));
  }

  reset(): void {
    this.ring = [];
    this.ringStart = 0;
    this.total = 0;
    this.rateLimited = 0;
    this.routes.clear();
  }

  private track(request: FastifyRequest, service: SandboxService, skipPrefix: string): InFlight | undefined {
    const existing = this.inFlight.get(request);
    if (existing) return existing;
    const path = request.url.split('?', 1)[0] ?? request.url;
    if (isUnder(path, skipPrefix)) return undefined;
    const entry: InFlight = {
      record: { at: Date.now(), service, method: request.method, route: request.routeOptions.url ?? NO_ROUTE, path },
      finished: false,
    };
    this.inFlight.set(request, entry);
    return entry;
  }

  private finish(request: FastifyRequest, reply: FastifyReply, status: number): void {
    const entry = this.inFlight.get(request);
    if (!entry || entry.finished) return;
    // A 'close' after a complete answer is the normal end of a response, not a dropped connection.
    if (status === 0 && reply.raw.writableFinished) status = reply.statusCode;
    entry.finished = true;
    this.add({ ...entry.record, status });
  }

  private add(record: RequestRecord): void {
    this.total += 1;
    if (record.status === 429) this.rateLimited += 1;
    const key = JSON.stringify([record.service, record.method, record.route]);
    let summary = this.routes.get(key);
    if (!summary) {
      summary = { service: record.service, method: record.method, route: record.route, count: 0, statuses: {} };
      this.routes.set(key, summary);
    }
    summary.count += 1;
    summary.statuses[String(record.status)] = (summary.statuses[String(record.status)] ?? 0) + 1;
    if (this.ring.length < this.maxRecords) {
      this.ring.push(record);
    } else {
      this.ring[this.ringStart] = record;
      this.ringStart = (this.ringStart + 1) % this.maxRecords;
    }
  }
}
