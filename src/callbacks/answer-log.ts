// At info, whatever arrives, a flood is a few lines a minute: a summary of answers per interval and one warning per
// refusal reason per interval. Every logged value is clipped, and a callback URL's token never reaches a log.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export type CallbackLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** Longest string value the receiver logs: an attacker chooses workflow ids, URLs and body fields. */
const MAX_LOGGED_CHARS = 120;
/** Distinct answers counted per interval: the receiver has about a dozen; this bounds memory. */
const MAX_COUNTED_ANSWERS = 64;

/** `value` cut to under `max` UTF-16 units (never half a surrogate pair), with the full length said when cut. */
export function clip(value: string, max = MAX_LOGGED_CHARS): string {
  if (value.length <= max) return value;
  let kept = value.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}… (${value.length} chars)`;
}

export function clipped(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, value]) => [name, typeof value === 'string' ? clip(value) : value]),
  );
}

/** `/callbacks/<workflowId>/<token>?…` → `/callbacks/<workflowId>/[redacted]`; other URLs unchanged. */
export function redactCallbackPath(url: string): string {
  return url.replace(/(\/callbacks\/[^/?#]*)[/?#].*$/s, '$1/[redacted]');
}

/** Fastify's default request serializer, without the token and with every text clipped. */
export function callbackRequestSerializer(request: FastifyRequest) {
  return {
    method: clip(request.method),
    url: clip(redactCallbackPath(request.url)),
    host: request.host === undefined ? undefined : clip(request.host),
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export class CallbackAnswerLog {
  private counts = new Map<string, number>();
  private readonly warned = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: { logger: CallbackLogger; intervalMs: number }) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  note(answer: string, refused: boolean, context: Record<string, unknown> = {}): void {
    if (this.counts.has(answer) || this.counts.size < MAX_COUNTED_ANSWERS)
      this.counts.set(answer, (this.counts.get(answer) ?? 0) + 1);
    if (refused && !this.warned.has(answer) && this.warned.size < MAX_COUNTED_ANSWERS) {
      this.warned.add(answer);
      this.options.logger.warn(
        { reason: answer, ...clipped(context) },
        'callback request refused; more of the same are counted in the next summary',
      );
    }
  }

  flush(): void {
    this.warned.clear();
    if (this.counts.size === 0) return;
    const answered = Object.fromEntries(this.counts);
    this.counts = new Map();
    const { logger, intervalMs } = this.options;
    logger.info({ answered, intervalMs }, 'callback requests answered since the last summary');
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }
}
