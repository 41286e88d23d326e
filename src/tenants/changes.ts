// Reloads and keys answering after a start-up outage, acted on one at a time: both set the same queues and schedules.
import type { Logger } from 'pino';
import { serialRunner, type TenantsChange } from './live.js';

/** A change to act on could not be: tried again after this long (each step is safe to repeat). */
const RETRY_MS = 15_000;

export function tenantChangeActor(logger: Logger, retryMs = RETRY_MS) {
  let act: ((change: TenantsChange) => Promise<void>) | undefined;
  const queued: TenantsChange[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const serially = serialRunner();
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
    // Tried again until it succeeds, in the order the changes came.
    later: (change: TenantsChange) => {
      queued.push(change);
      void drain();
    },
    // Once the workers exist: the changes that came before are acted on now.
    begin: (acting: (change: TenantsChange) => Promise<void>) => {
      act = acting;
      void drain();
    },
    // Nothing is acted on after.
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await serially(async () => undefined);
    },
  };
}
