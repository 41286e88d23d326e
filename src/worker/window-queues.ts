// The compliance queues of the windows that serve several businesses: docs/tenancy.md, "A window that serves several
// businesses".
import type { Logger } from 'pino';
import { complianceTaskQueue } from '../contracts/task-queues.js';
import type { TenantDirectory } from '../tenants/directory.js';
import type { PolledQueue } from './queue-registration.js';
import type { Workers } from './workers.js';

type WindowQueue = { taskQueue: string; perSecond: number; businesses: readonly string[] };

/**
 * The queues this process polls: its three and the windows' own, and those a window lost while work placed there
 * before still waits (stranded). One change at a time, whichever asks: a reload of the tenants file or the check
 * that finds stranded queues.
 */
export class WindowQueues {
  private readonly polledSince = new Map<string, PolledQueue>();
  private stranded: readonly string[] = [];
  private serving = Promise.resolve();

  constructor(
    private readonly workers: Workers,
    private readonly directory: () => TenantDirectory,
    private readonly taskQueue: string,
    private readonly logger: Logger,
    private own: readonly WindowQueue[],
  ) {}

  /** For the check that the version holds each queue (a refused one is said at once). */
  polled(): PolledQueue[] {
    return [...this.polledSince.values()];
  }

  /** The windows' own queues as budgets were last held. */
  serve(own: readonly WindowQueue[] = this.own): Promise<void> {
    this.own = own;
    return (this.serving = this.serving.then(() => this.apply()));
  }

  /** Stranded queues found, or emptied: served until quiet. */
  strand(queues: readonly string[]): void {
    this.stranded = queues;
    this.serve().catch((err: unknown) =>
      this.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'stranded window queues not served'),
    );
  }

  private async apply(): Promise<void> {
    const prefix = complianceTaskQueue(this.taskQueue).length + 1;
    const taken = this.stranded
      .filter((name) => !this.own.some((q) => q.taskQueue === name))
      .map((name) => {
        const window = this.directory().budgetWindow(name.slice(prefix));
        const perMinute = window?.requestsPerMinute || 120;
        return { taskQueue: name, perSecond: perMinute / 60, businesses: window?.businesses ?? [] };
      });
    const windows = [...this.own, ...taken];
    await this.workers.serveWindowQueues(windows);
    const all = this.directory().businesses();
    const now = Date.now();
    const wanted = [...this.workers.queues.map((taskQueue) => ({ taskQueue, businesses: all })), ...windows];
    for (const name of [...this.polledSince.keys()])
      if (!wanted.some((q) => q.taskQueue === name)) this.polledSince.delete(name);
    for (const { taskQueue, businesses } of wanted)
      this.polledSince.set(taskQueue, { taskQueue, businesses, since: this.polledSince.get(taskQueue)?.since ?? now });
  }
}
