/**
 * The one "poll until" of the tests and scripts. No vitest in here: tools/record-histories.ts runs it outside
 * the test runner.
 */
export interface EventuallyOptions {
  /** Fail after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between reads (default 100 ms). */
  intervalMs?: number;
  /** What is awaited, for the failure message (default: "condition"). */
  what?: string;
}

/**
 * Reads until `done` accepts the value and returns that value; after `timeoutMs` fails with the last one.
 * `options` may be just the timeout in ms.
 */
export async function eventually<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options: EventuallyOptions | number = {},
): Promise<T> {
  const {
    timeoutMs = 10_000,
    intervalMs = 100,
    what = 'condition',
  } = typeof options === 'number' ? { timeoutMs: options } : options;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`${what} not met in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
