/**
 * Every timer the compliance sandbox starts (async settlements, callback attempts, simulated authority
 * latency), so closing the sandbox stops them all and no test leaks a timer into the next.
 */
export class Timers {
  private readonly pending = new Map<NodeJS.Timeout, () => void>();
  private closed = false;

  /** Runs `fn` after `ms`; returns a function that cancels it. Does nothing once closed. */
  after(ms: number, fn: () => void): () => void {
    if (this.closed) return () => {};
    const handle = setTimeout(
      () => {
        this.pending.delete(handle);
        fn();
      },
      Math.max(0, ms),
    );
    this.pending.set(handle, () => {});
    return () => {
      clearTimeout(handle);
      this.pending.delete(handle);
    };
  }

  /** Resolves after `ms`, or at once when the timers are cleared (a closing server must not wait). */
  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const handle = setTimeout(() => {
        this.pending.delete(handle);
        resolve();
      }, ms);
      this.pending.set(handle, resolve);
    });
  }

  /** Cancels every pending timer; sleepers resolve at once. */
  clear(): void {
    for (const [handle, wake] of this.pending) {
      clearTimeout(handle);
      wake();
    }
    this.pending.clear();
  }

  close(): void {
    this.closed = true;
    this.clear();
  }
}
