/** Settings of the purchases sync. Errors never repeat a value: a URL can carry a token. */
import { isLoopbackHost } from '../http/base-url.js';
import { boundedDuration, ConfigError, parseWith, readCredential, type Env } from './env.js';
import { readVariable as read, resolveSecretFiles } from './env.js';

export type PurchasesSinkConfig =
  | { kind: 'file'; path: string }
  // `webhookSecret` (whsec_) signs every delivery; named like the other webhook secrets the logger redacts.
  | { kind: 'webhook'; url: string; webhookSecret: string };

/** No sink: the sync is off (no schedules are made); no business ids: every business the compliance key can act for. */
export type PurchasesConfig = ReturnType<typeof loadPurchasesConfig>;

export const DEFAULT_PURCHASES_SYNC_INTERVAL_MS = 15 * 60_000;
const syncInterval = boundedDuration(10_000, 7 * 24 * 3_600_000, '10s to 7d', '15m');
const sweepPeriod = boundedDuration(3_600_000, 31 * 24 * 3_600_000, '1h to 31d', '24h');

function parseSink(env: Env): PurchasesSinkConfig | undefined {
  const text = read(env, 'PURCHASES_SINK');
  if (text === undefined) return undefined;
  if (text.startsWith('file:')) {
    const path = text.slice('file:'.length);
    if (path === '') throw new ConfigError('PURCHASES_SINK: file: needs a path, e.g. file:./purchases.ndjson');
    return { kind: 'file', path };
  }
  const url = URL.parse(text);
  if (!url) throw new ConfigError('PURCHASES_SINK: must be file:<path> or an https:// URL');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ConfigError(
      'PURCHASES_SINK: must be file:<path> or an https:// URL (http:// only to this machine: localhost, 127.x, [::1])',
    );
  }
  if (url.username || url.password)
    throw new ConfigError('PURCHASES_SINK: must not carry a user name or password; the deliveries are signed');
  const secret = readCredential(env, 'PURCHASES_WEBHOOK_SECRET', 'accountingWebhookSecret');
  if (secret === undefined)
    throw new ConfigError('PURCHASES_WEBHOOK_SECRET is required when PURCHASES_SINK is a URL (a whsec_ secret)');
  return { kind: 'webhook', url: url.toString(), webhookSecret: secret };
}

function parseBusinesses(env: Env): string[] | undefined {
  const text = read(env, 'PURCHASES_SYNC_BUSINESSES');
  if (text === undefined) return undefined;
  const ids = text.split(',').map((id) => id.trim());
  if (ids.some((id) => id === '' || /\s/.test(id))) {
    throw new ConfigError(
      'PURCHASES_SYNC_BUSINESSES: must be a comma-separated list of business ids, without empty entries',
    );
  }
  return [...new Set(ids)];
}

/** A whole number of days from `min` to `max`, or undefined when unset (the sync's own default then). */
function parseDays(env: Env, name: string, min: number, max: number): number | undefined {
  const text = read(env, name);
  if (text === undefined) return undefined;
  const days = Number(text);
  if (!/^\d+$/.test(text) || days < min || days > max)
    throw new ConfigError(`${name}: must be a whole number of days from ${min} to ${max}`);
  return days;
}

/** What every sync lists and how far back it follows invoices (docs/purchases-sync.md, "What a sync lists"). */
function parseListing(env: Env) {
  const windowDays = parseDays(env, 'PURCHASES_WINDOW_DAYS', 0, 366);
  const horizonDays = parseDays(env, 'PURCHASES_HORIZON_DAYS', 30, 3_660);
  if (windowDays !== undefined && horizonDays !== undefined && horizonDays <= windowDays)
    throw new ConfigError('PURCHASES_HORIZON_DAYS: must be more than PURCHASES_WINDOW_DAYS');
  const sweepMs = parseWith<number | undefined>(sweepPeriod, env, 'PURCHASES_SWEEP_PERIOD', undefined);
  return {
    ...(windowDays === undefined ? {} : { windowDays }),
    ...(horizonDays === undefined ? {} : { horizonDays }),
    ...(sweepMs === undefined ? {} : { sweepHours: sweepMs / 3_600_000 }),
  };
}

export function loadPurchasesConfig(rawEnv: Env) {
  const env = resolveSecretFiles(rawEnv, ['PURCHASES_WEBHOOK_SECRET']);
  return {
    sink: parseSink(env),
    intervalMs: parseWith(syncInterval, env, 'PURCHASES_SYNC_INTERVAL', DEFAULT_PURCHASES_SYNC_INTERVAL_MS),
    businessIds: parseBusinesses(env),
    /** Sync options; empty: the sync's defaults (7 days, 730 days, 24 h), and the schedules' arguments unchanged. */
    listing: parseListing(env),
  };
}

/** For logs: the file, or the URL without its query (which could carry a token). */
export function describeSink(config: PurchasesSinkConfig | undefined): string {
  if (config === undefined) return 'none';
  if (config.kind === 'file') return `file:${config.path}`;
  const url = new URL(config.url);
  return `${url.origin}${url.pathname}`;
}
