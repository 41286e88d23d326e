/**
 * What the receiver writes at info and above, whatever arrives: one summary line per interval with the count of
 * each answer (accepted, duplicate, invalid_token, timeout, connection_refused, …), and one warning the first time
 * a refusal reason occurs in an interval. A flood of any size is therefore a few lines a minute; each request's
 * own line is at debug. Every value logged is cut to a small bound (`clip`), so no sender can make a line long.
 */
import type { Logger } from 'pino';

export type CallbackLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** Longest string value the receiver logs: an attacker chooses workflow ids, URLs and body fields. */
export const MAX_LOGGED_CHARS = 120;
/** Distinct answers counted per interval; the receiver has about a dozen, this bounds memory if that ever changes. */
const MAX_COUNTED_ANSWERS = 64;
export const DEFAULT_SUMMARY_INTERVAL_MS = 60_000;

/** `value` cut to under `max` UTF-16 units (never half a surrogate pair), with the full length said when cut. */
export function clip(value: string, max = MAX_LOGGED_CHARS): string {
  if (value.length <= max) return value;
  let kept = value.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}… (${value.length} chars)`;
}

/** Each string value (one level deep) clipped; other values kept as they are. */
export function clipped(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, value]) => [name, typeof value === 'string' ? clip(value) : value]),
  );
}

export interface AnswerLogOptions {
  logger: CallbackLogger;
  /** One summary line per this interval, when anything was answered (default 60 s). */
  intervalMs?: number;
}

export class CallbackAnswerLog {
  private readonly logger: CallbackLogger;
  private readonly intervalMs: number;
  private counts = new Map<string, number>();
  private readonly warned = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: AnswerLogOptions) {
    this.logger = options.logger;
    this.intervalMs = options.intervalMs ?? DEFAULT_SUMMARY_INTERVAL_MS;
    if (!Number.isFinite(this.intervalMs) || this.intervalMs <= 0)
      throw new RangeError('the summary interval must be a positive number');
  }

  /** Starts the summary timer; it never keeps the process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Counts one answer; a refusal reason new in this interval is also warned about at once, with `context` clipped. */
  note(answer: string, refused: boolean, context: Record<string, unknown> = {}): void {
    if (this.counts.has(answer) || this.counts.size < MAX_COUNTED_ANSWERS)
      this.counts.set(answer, (this.counts.get(answer) ?? 0) + 1);
    if (refused && !this.warned.has(answer) && this.warned.size < MAX_COUNTED_ANSWERS) {
      this.warned.add(answer);
      this.logger.warn(
        { reason: answer, ...clipped(context) },
        'callback request refused; more of the same are counted in the next summary',
      );
    }
  }

  /** Writes the summary of the answers since the last one, if any. */
  flush(): void {
    this.warned.clear();
    if (this.counts.size === 0) return;
    const answered = Object.fromEntries(this.counts);
    this.counts = new Map();
    this.logger.info({ answered, intervalMs: this.intervalMs }, 'callback requests answered since the last summary');
  }

  /** Stops the timer and writes what is left. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }
}
