/** Polls the tenants (docs/tenancy.md): a Kubernetes secret is swapped through symlinks that file watchers miss. */
import { hash } from 'node:crypto';
import type { Logger } from 'pino';
import { ConfigError } from '../config/env.js';
import type { TenantsConfig } from './types.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { LiveTenants, TenantsChange } from './live.js';
import { TenantServiceError } from './directory.js';
import { errorText } from './probes.js';

export interface TenantsReload {
  load: () => TenantsConfig;
  intervalMs: number;
}

/** Keys included (a rotated key is a change), never kept or logged. */
function tenantsFingerprint({ compliance, accounting, links, stockIn }: TenantsConfig): string {
  return hash('sha256', JSON.stringify({ compliance, accounting, links, stockIn }));
}

/** Each change served is handed once to `onChange`, which acts on it and tries again until that succeeds. */
export function watchTenants(options: {
  live: LiveTenants;
  reload: TenantsReload;
  served: TenantsConfig;
  onChange: (change: TenantsChange) => void;
  logger: Logger;
  metrics?: MetricsRecorder;
}): () => Promise<void> {
  const { live, reload, logger, metrics } = options;
  let settled = tenantsFingerprint(options.served);
  let checking: Promise<void> = Promise.resolve();

  const check = async () => {
    let config: TenantsConfig;
    try {
      config = reload.load();
    } catch (err) {
      const digest = `unreadable:${errorText(err)}`;
      if (digest !== settled) {
        settled = digest;
        metrics?.count('etims_tenants_reloads', { outcome: 'refused' });
        logger.error(
          { err: err instanceof ConfigError ? err.message : String(err) },
          'tenants file changed but cannot be read: still serving the tenants as they were',
        );
      }
      return;
    }
    const digest = tenantsFingerprint(config);
    if (digest === settled) return;
    try {
      const change = await live.replace(config);
      settled = digest;
      metrics?.count('etims_tenants_reloads', { outcome: 'applied' });
      options.onChange(change);
    } catch (err) {
      const transient = err instanceof TenantServiceError;
      // A refused file is not asked again until it changes; a service that could not be asked is, next interval.
      if (!transient) settled = digest;
      metrics?.count('etims_tenants_reloads', { outcome: transient ? 'failed' : 'refused' });
      logger.error(
        { err: errorText(err), retry: transient ? 'next interval' : 'when the file changes' },
        'tenants file changed but was not applied: still serving the tenants as they were',
      );
    }
  };

  const timer = setInterval(() => {
    checking = checking.then(check);
  }, reload.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await checking;
  };
}
