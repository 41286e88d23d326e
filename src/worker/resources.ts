import type { Logger } from 'pino';

/**
 * What a worker process opened, closed once and newest first: what was opened later may use what was opened before
 * it (the receiver the client, the workers the connection), never the other way round.
 */
export class Resources {
  private readonly held: Array<{ name: string; close: () => unknown }> = [];

  constructor(private readonly logger?: Logger) {}

  /** `resource`, closed by `close` when the process closes. */
  own<T>(name: string, resource: T, close: (resource: T) => unknown): T {
    this.held.push({ name, close: () => close(resource) });
    return resource;
  }

  /** Each is closed whatever became of the others; a second call finds nothing left. */
  async close(): Promise<void> {
    for (let next = this.held.pop(); next !== undefined; next = this.held.pop()) {
      const { name, close } = next;
      try {
        await close();
      } catch (err) {
        // A process that is stopping has nothing left to do about it.
        this.logger?.debug({ resource: name, err: err instanceof Error ? err.message : String(err) }, 'close failed');
      }
    }
  }
}
