/**
 * Acting on a change of the tenants served (budgets, window queues, schedules), whichever way it came: a reload of
 * the file, or a key that answered after an outage at start-up. One at a time, since both set the same queues and
 * schedules; a change that came before the workers existed is acted on once they do.
 */
import type { Logger } from 'pino';
import type { TenantsChange } from '../tenants/live.js';

/** A change to act on could not be: tried again after this long (each step is safe to repeat). */
const RETRY_MS = 15_000;

export interface TenantChangeActor {
  /** Acts after any change under way; rejects as acting does (the caller tries again). */
  now(change: TenantsChange): Promise<void>;
  /** Acts when it can, tried again until it succeeds, in the order the changes came. */
  later(change: TenantsChange): void;
  /** What acting is, once the workers exist: the changes that came before are acted on now. */
  begin(act: (change: TenantsChange) => Promise<void>): void;
  /** Waits for what is under way; nothing is acted on after. */
  stop(): Promise<void>;
}

export function tenantChangeActor(logger: Logger, retryMs = RETRY_MS): TenantChangeActor {
  let act: ((change: TenantsChange) => Promise<void>) | undefined;
  const queued: TenantsChange[] = [];
  let chain: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const serially = (run: () => Promise<void>): Promise<void> => {
    const result = chain.then(run);
    chain = result.catch(() => undefined);
    return result;
  };
  const drain = (): Promise<void> =>
    serially(async () => {
      while (act && queued.length > 0 && !stopped) {
        try {
          await act(queued[0]!);
        } catch (err) {
          logger.error(
            { err: err instanceof Error ? err.message : String(err), retryInSeconds: retryMs / 1000 },
            'tenants served, but acting on the change failed',
          );
          timer ??= setTimeout(() => {
            timer = undefined;
            void drain();
          }, retryMs).unref();
          return;
        }
        queued.shift();
      }
    });

  return {
    now: (change) =>
      serially(async () => {
        if (act && !stopped) await act(change);
      }),
    later: (change) => {
      queued.push(change);
      void drain();
    },
    begin: (acting) => {
      act = acting;
      void drain();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await chain;
    },
  };
}
