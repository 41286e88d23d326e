// At least once, de-duplicated on the stable event id: docs/purchases-sync.md, "Sinks".
import { appendFile, mkdir, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { webhookHeaders } from '../accounting/webhooks.js';
import type { PurchasesSinkConfig } from '../config/purchases.js';
import { parseRetryAfter } from '../http/rate-limit.js';
import type { FiscalDayEvent } from '../contracts/fiscal-day.js';
import type { PurchaseEvent } from '../contracts/purchases-sync.js';

/** What the worker delivers: the purchases sync's events and the days' closes (docs/fiscal-day.md). */
export type SinkEvent = PurchaseEvent | FiscalDayEvent;

export interface EventSink {
  deliver(event: SinkEvent, options?: { signal?: AbortSignal }): Promise<void>;
  /** For logs: where events go, without any secret. */
  readonly description: string;
  close(): Promise<void>;
}

export type PurchaseEventSink = EventSink;

export class SinkDeliveryError extends Error {
  override readonly name = 'SinkDeliveryError';

  readonly status: number | undefined;
  /** Retry-After, when the receiver asked. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    message: string,
    /** Whether another attempt may succeed (5xx, 408, 429, network); false for other 4xx. */
    readonly retryable: boolean,
    { cause, ...answer }: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.status = answer.status;
    this.retryAfterSeconds = answer.retryAfterSeconds;
  }
}

export async function createSink(config: PurchasesSinkConfig | undefined): Promise<PurchaseEventSink | undefined> {
  if (config === undefined) return undefined;
  if (config.kind === 'file') return openNdjsonSink(config.path);
  return webhookSink({ url: config.url, secret: config.webhookSecret });
}

/**
 * What an NDJSON sink reads of its file on open, and how many ids it remembers: an event is delivered again only when
 * its sync did not write it to its book (a worker killed in between), so within minutes of the first time. The file
 * grows with the business's history; what the sink reads and holds does not.
 */
const NDJSON_TAIL_BYTES = 16 * 1024 * 1024;
const NDJSON_IDS_KEPT = 100_000;

/** The last `bytes` of the file from a line's start (empty when there is no file). */
async function tailOf(path: string, bytes: number): Promise<{ text: string; whole: boolean }> {
  const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    return undefined;
  });
  if (file === undefined) return { text: '', whole: true };
  try {
    const { size } = await file.stat();
    const start = Math.max(0, size - bytes);
    const buffer = Buffer.alloc(size - start);
    await file.read(buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8');
    // Started inside a line: that line is older than what is kept.
    return start === 0 ? { text, whole: true } : { text: text.slice(text.indexOf('\n') + 1), whole: false };
  } finally {
    await file.close();
  }
}

/**
 * Opening the file reads the event ids of its last 16 MB, so an event delivered again is not written twice. One
 * process per file.
 */
export async function openNdjsonSink(path: string): Promise<PurchaseEventSink & { readonly size: number }> {
  const absolute = resolve(path);
  await mkdir(dirname(absolute), { recursive: true });
  const { text } = await tailOf(absolute, NDJSON_TAIL_BYTES);
  const ids = eventIdsIn(text);
  // The file does not end with a newline (a write was cut short): start the next line on a new one.
  let needsNewline = text !== '' && !text.endsWith('\n');
  const append = async (event: SinkEvent, signal: AbortSignal | undefined): Promise<void> => {
    if (ids.has(event.id)) return;
    if (signal?.aborted) throw new SinkDeliveryError(`delivery of ${event.id} was cancelled`, true);
    const line = `${needsNewline ? '\n' : ''}${JSON.stringify(event)}\n`;
    try {
      await appendFile(absolute, line, 'utf8');
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new SinkDeliveryError(`cannot append to ${absolute}: ${why}`, true, { cause: err });
    }
    needsNewline = false;
    ids.add(event.id);
    // Insertion order: the first is the oldest.
    if (ids.size > NDJSON_IDS_KEPT) ids.delete(ids.values().next().value!);
  };
  /** Appends run one after another: two deliveries never interleave their bytes. */
  let queue: Promise<unknown> = Promise.resolve();
  return {
    description: `file:${absolute}`,
    get size() {
      return ids.size;
    },
    deliver(event, options = {}) {
      const write = queue.then(() => append(event, options.signal));
      queue = write.catch(() => undefined);
      return write;
    },
    close: async () => void (await queue),
  };
}

function eventIdsIn(text: string): Set<string> {
  const ids = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = JSON.parse(line) as { id?: unknown };
      if (typeof parsed.id === 'string') ids.add(parsed.id);
    } catch {
      // A line cut short by a crash: its event was never acknowledged, so it is delivered again.
    }
  }
  return ids;
}

const RETRYABLE_4XX = new Set([408, 429]);

export function webhookSink(options: {
  url: string;
  /** `whsec_…`; never logged, never part of an error. */
  secret: string;
  /** Per delivery (default 10 s). */
  timeoutMs?: number;
}): PurchaseEventSink {
  const url = new URL(options.url);
  const { secret, timeoutMs = 10_000 } = options;
  const description = `${url.origin}${url.pathname}`;
  const agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: 10_000 } });
  return {
    description,
    close: () => agent.close(),
    async deliver(event, deliverOptions = {}) {
      const rawBody = JSON.stringify(event);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'etims-temporal-worker (events)',
        ...webhookHeaders({ secret, id: event.id, timestamp: Math.floor(Date.now() / 1000), rawBody }),
      };
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = deliverOptions.signal ? AbortSignal.any([deliverOptions.signal, timeout]) : timeout;
      let status: number;
      let retryAfter: number | undefined;
      try {
        const response = await request(url, { method: 'POST', headers, body: rawBody, signal, dispatcher: agent });
        status = response.statusCode;
        retryAfter = parseRetryAfter(response.headers);
        // Drain the body so the socket goes back to the pool; its content does not matter.
        await response.body.dump();
      } catch (err) {
        const why = timeout.aborted ? `no answer in ${timeoutMs} ms` : err instanceof Error ? err.message : String(err);
        throw new SinkDeliveryError(`${description}: delivery of ${event.id} failed: ${why}`, true, { cause: err });
      }
      if (status >= 200 && status < 300) return;
      // A redirect is refused like a 4xx: the configured URL is wrong, and a signed body is not re-sent elsewhere.
      const retryable = status >= 500 || RETRYABLE_4XX.has(status);
      const message = `${description} answered ${status} to ${event.id}`;
      throw new SinkDeliveryError(message, retryable, { status, retryAfterSeconds: retryAfter });
    },
  };
}
