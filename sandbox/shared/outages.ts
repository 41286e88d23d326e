import type { FastifyInstance } from 'fastify';
import { isUnder, urlPath, type SandboxService, type ServiceErrorBody } from './faults.js';
import { OutageSchema, type OutageInput, type ParsedOutage } from './outage-schema.js';

export type { OutageInput } from './outage-schema.js';

export type OutageSource = 'fixture' | 'runtime';

interface OutageBase {
  id: string;
  /** ISO date-time. */
  startsAt: string;
  /** ISO date-time; null: until deleted. */
  endsAt: string | null;
  message: string | null;
  source: OutageSource;
}

export interface ServiceOutage extends OutageBase {
  kind: 'service';
  service: SandboxService;
  mode: 'unavailable' | 'refuse';
  retryAfterSeconds: number | null;
}

export interface AuthorityOutage extends OutageBase {
  kind: 'authority';
  service: 'compliance';
  mode: 'reject' | 'in_flight';
}

export type Outage = ServiceOutage | AuthorityOutage;

export type OutageState = 'scheduled' | 'active' | 'ended';

/** An outage as the inspection APIs list it. */
export type InspectedOutage = Outage & {
  state: OutageState;
  active: boolean;
  /** Requests the service outage answered (or dropped), or submissions the authority outage refused or held. */
  affected: number;
};

/** An outage whose times do not fit the moment it is added; `field` names the wrong field. */
export class OutageError extends Error {
  override readonly name = 'OutageError';

  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

interface Entry {
  outage: Outage;
  start: number;
  end: number | null;
  affected: number;
  /** Set once the end has been announced: the outage can never be active again. */
  ended: boolean;
  cancelTimer: (() => void) | undefined;
}

const DEFAULT_SKIP_PREFIX = '/__sandbox';
const MAX_DEFAULT_RETRY_AFTER_SECONDS = 5;
const UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable';

/**
 * The outages of both sandbox services, each from a start to an end. Whether one is active is decided at each
 * request from the clock; its end is also announced (onEnd) when it comes, when it is removed or replaced, so
 * what an authority outage held in flight can be failed then.
 */
export class OutageSchedule {
  private entries: Entry[] = [];
  private nextId = 1;
  private closed = false;
  private readonly fixture: ParsedOutage[];
  private readonly now: () => number;
  private readonly listeners = new Set<(outage: Outage) => void>();

  constructor(options: { fixture?: readonly OutageInput[]; now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    this.fixture = (options.fixture ?? []).map((input) => OutageSchema.parse(input));
    this.reset();
  }

  /**
   * Validates and adds an outage, relative times counted from now; one with a known id replaces it. Throws a
   * ZodError for a malformed outage, an OutageError for one that would end before it starts.
   */
  add(input: OutageInput, options: { defaultService?: SandboxService } = {}): InspectedOutage {
    return this.view(this.insert(OutageSchema.parse(input), 'runtime', options.defaultService));
  }

  remove(id: string): boolean {
    const entry = this.entries.find((e) => e.outage.id === id);
    if (!entry) return false;
    this.drop([entry]);
    return true;
  }

  /** Removes every outage (of `service` only, when given), fixture ones too. */
  clear(service?: SandboxService): void {
    this.drop(this.entries.filter((e) => service === undefined || e.outage.service === service));
  }

  /** Back to the fixture's outages (those of `service` only, when given), relative times counted from now. */
  reset(service?: SandboxService): void {
    this.clear(service);
    for (const parsed of this.fixture) {
      if (service === undefined || serviceOf(parsed, 'compliance') === service) {
        this.insert(parsed, 'fixture', 'compliance');
      }
    }
  }

  list(service?: SandboxService): InspectedOutage[] {
    return this.entries.filter((e) => service === undefined || e.outage.service === service).map((e) => this.view(e));
  }

  get(id: string): InspectedOutage | undefined {
    const entry = this.entries.find((e) => e.outage.id === id);
    return entry && this.view(entry);
  }

  /** The active authority outage that takes a submission now, counted as affected by it; undefined: none. */
  interceptSubmission(): AuthorityOutage | undefined {
    const entry = this.activeEntry((o) => o.kind === 'authority');
    if (!entry || entry.outage.kind !== 'authority') return undefined;
    entry.affected += 1;
    return { ...entry.outage };
  }

  /** Calls `listener` with each outage whose end came or that was removed; returns the unsubscribe. */
  onEnd(listener: (outage: Outage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Adds the hook that answers every request of `service` outside `skipPrefix` while one of its service outages is
   * active. Install after RequestStats, so the answers (and dropped connections) are counted, and before the faults.
   */
  install(
    app: FastifyInstance,
    service: SandboxService,
    errorBody: ServiceErrorBody,
    options: { skipPrefix?: string } = {},
  ): void {
    const skipPrefix = options.skipPrefix ?? DEFAULT_SKIP_PREFIX;
    app.addHook('onRequest', async (request, reply) => {
      if (isUnder(urlPath(request.url), skipPrefix)) return;
      const entry = this.activeEntry((o) => o.kind === 'service' && o.service === service);
      if (!entry || entry.outage.kind !== 'service') return;
      entry.affected += 1;
      const outage = entry.outage;
      if (outage.mode === 'refuse') {
        // As the reset fault: hijacked so fastify never touches the request again.
        reply.hijack();
        request.raw.socket.destroy();
        return;
      }
      const retryAfter = outage.retryAfterSeconds ?? this.defaultRetryAfter(entry);
      return reply
        .code(503)
        .header('retry-after', String(retryAfter))
        .send(errorBody(503, 'service_unavailable', outage.message ?? UNAVAILABLE_MESSAGE));
    });
  }

  /** Stops the end timers; the outages stay listed but no end is announced any more. */
  close(): void {
    this.closed = true;
    for (const entry of this.entries) entry.cancelTimer?.();
  }

  private insert(parsed: ParsedOutage, source: OutageSource, defaultService: SandboxService | undefined): Entry {
    const now = this.now();
    const start = parsed.startsAt !== undefined ? Date.parse(parsed.startsAt) : now + (parsed.startInMs ?? 0);
    const end =
      parsed.endsAt !== undefined
        ? Date.parse(parsed.endsAt)
        : parsed.durationMs !== undefined
          ? start + parsed.durationMs
          : null;
    // A fixture is read again at every reset, when an absolute end may have passed: that outage is simply over.
    if (source === 'runtime' && end !== null && end <= start) {
      throw new OutageError('endsAt', `must be after the outage's start (${new Date(start).toISOString()})`);
    }
    const id = parsed.id ?? this.freshId();
    const times = {
      startsAt: new Date(start).toISOString(),
      endsAt: end === null ? null : new Date(end).toISOString(),
      message: parsed.message ?? null,
      source,
    };
    const service = serviceOf(parsed, defaultService ?? 'compliance');
    const outage: Outage =
      parsed.kind === 'service'
        ? {
            id,
            kind: 'service',
            service,
            mode: parsed.mode,
            ...times,
            retryAfterSeconds: parsed.retryAfterSeconds ?? null,
          }
        : { id, kind: 'authority', service: 'compliance', mode: parsed.mode, ...times };
    const entry: Entry = { outage, start, end, affected: 0, ended: end !== null && end <= now, cancelTimer: undefined };
    const existing = this.entries.find((e) => e.outage.id === id);
    if (existing) this.drop([existing]);
    this.entries.push(entry);
    this.scheduleEnd(entry);
    return entry;
  }

  private scheduleEnd(entry: Entry): void {
    if (entry.end === null || entry.ended || this.closed) return;
    // The clock may run behind the timer (or be moved by a test): the end is announced only once it has come.
    const handle = setTimeout(
      () => {
        entry.cancelTimer = undefined;
        if (entry.end !== null && this.now() < entry.end) this.scheduleEnd(entry);
        else this.announceEnd(entry);
      },
      Math.max(0, entry.end - this.now()),
    );
    // An outage must never keep a process alive that is otherwise done.
    handle.unref();
    entry.cancelTimer = () => clearTimeout(handle);
  }

  private drop(entries: Entry[]): void {
    const dropped = new Set(entries);
    this.entries = this.entries.filter((e) => !dropped.has(e));
    for (const entry of entries) {
      entry.cancelTimer?.();
      entry.cancelTimer = undefined;
      this.announceEnd(entry);
    }
  }

  private announceEnd(entry: Entry): void {
    if (entry.ended) return;
    entry.ended = true;
    for (const listener of [...this.listeners]) listener({ ...entry.outage });
  }

  private activeEntry(predicate: (outage: Outage) => boolean): Entry | undefined {
    const now = this.now();
    return this.entries.find((e) => predicate(e.outage) && this.stateOf(e, now) === 'active');
  }

  private stateOf(entry: Entry, now: number): OutageState {
    if (entry.ended || (entry.end !== null && now >= entry.end)) return 'ended';
    return now < entry.start ? 'scheduled' : 'active';
  }

  private defaultRetryAfter(entry: Entry): number {
    if (entry.end === null) return MAX_DEFAULT_RETRY_AFTER_SECONDS;
    const left = Math.ceil((entry.end - this.now()) / 1000);
    return Math.min(MAX_DEFAULT_RETRY_AFTER_SECONDS, Math.max(1, left));
  }

  private view(entry: Entry): InspectedOutage {
    const state = this.stateOf(entry, this.now());
    return { ...entry.outage, state, active: state === 'active', affected: entry.affected };
  }

  private freshId(): string {
    let id: string;
    do id = `outage-${this.nextId++}`;
    while (this.entries.some((e) => e.outage.id === id));
    return id;
  }
}

function serviceOf(parsed: ParsedOutage, defaultService: SandboxService): SandboxService {
  return parsed.kind === 'authority' ? 'compliance' : (parsed.service ?? defaultService);
}
