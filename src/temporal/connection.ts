// Why: docs/deployment.md, "Connecting to Temporal". Failures name the setting, never a secret.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, type ConnectionLike, type ConnectionOptions } from '@temporalio/client';
import {
  loadClientConfigProfile,
  toClientOptions,
  type ClientConfigProfile,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import type { NativeConnection, NativeConnectionOptions } from '@temporalio/worker';
import { ConfigError, readSettingFile, resolveSecretFiles, type Env } from '../config/env.js';

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface TemporalSettings {
  /** Undefined when neither the environment nor a profile names a server (the local stack starts one). */
  address: string | undefined;
  namespace: string;
  profile?: string | undefined;
  apiKey?: string | undefined;
  tls?: NativeConnectionOptions['tls'];
  metadata?: Record<string, string> | undefined;
  connectTimeoutMs: number;
  /** Values that must never appear in a message. */
  secrets: string[];
}

export class TemporalConnectionError extends Error {
  override readonly name = 'TemporalConnectionError';
}

/** Each TLS source's setting, in the variables' and temporal.toml's spelling (for messages). */
const TLS_SOURCES = { clientCert: 'CLIENT_CERT', clientKey: 'CLIENT_KEY', serverCACert: 'SERVER_CA_CERT' } as const;

type TlsSource = keyof typeof TLS_SOURCES;

/** Messages name the setting, never the content. */
function readTlsSource(source: TlsSource, data: ConfigDataSource, env: Record<string, string>): Buffer {
  const [name, toml] = [`TEMPORAL_TLS_${TLS_SOURCES[source]}`, TLS_SOURCES[source].toLowerCase()];
  const profile = env.TEMPORAL_PROFILE ?? 'default';
  const setting =
    'path' in data && env[`${name}_PATH`] === data.path
      ? `${name}_PATH`
      : 'data' in data && env[`${name}_DATA`] !== undefined
        ? `${name}_DATA`
        : `tls.${toml}_path / ${toml}_data of profile "${profile}" in the Temporal config file`;
  const bytes =
    'path' in data ? readSettingFile(setting, data.path, (path) => readFileSync(path)) : Buffer.from(data.data);
  const where = 'path' in data ? `${setting} (${data.path})` : setting;
  try {
    if (source === 'clientKey') createPrivateKey(bytes);
    else new X509Certificate(bytes);
  } catch {
    throw new ConfigError(
      `${where}: not a PEM ${source === 'clientKey' ? 'private key' : 'certificate'}; the content is not shown`,
    );
  }
  return bytes;
}

/** Throws ConfigError naming the variable or file of an unusable setting. */
export function loadTemporalSettings(env: Env): TemporalSettings {
  // Empty variables count as unset (compose files and shells set them to "").
  const vars = Object.fromEntries(
    Object.entries(resolveSecretFiles(env, ['TEMPORAL_API_KEY'])).filter(
      (e): e is [string, string] => e[1] !== undefined && e[1].trim() !== '',
    ),
  );
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: vars });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const file = vars.TEMPORAL_CONFIG_FILE ?? 'the Temporal config file (temporal.toml)';
    if (/Profile '.*' not found/.test(message))
      throw new ConfigError(`TEMPORAL_PROFILE: ${message.replace('config data', file)}`);
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new ConfigError(`TEMPORAL_CONFIG_FILE: cannot read ${file} (${code})`);
    throw new ConfigError(`${file} is not valid TOML: ${message.split('\n')[0]}`);
  }

  const secrets: string[] = [];
  if (profile.apiKey) secrets.push(profile.apiKey);
  if (vars.TEMPORAL_TLS_CLIENT_KEY_DATA) secrets.push(vars.TEMPORAL_TLS_CLIENT_KEY_DATA);

  // envconfig reads the TLS files itself and silently drops half a client pair: check them first, by name.
  const tls = profile.tls;
  if (tls && !tls.disabled) {
    if ((tls.clientCert === undefined) !== (tls.clientKey === undefined)) {
      const missing = tls.clientCert === undefined ? 'TEMPORAL_TLS_CLIENT_CERT_PATH' : 'TEMPORAL_TLS_CLIENT_KEY_PATH';
      const present = tls.clientCert === undefined ? 'a client key' : 'a client certificate';
      throw new ConfigError(
        `${missing} (or its _DATA / temporal.toml form) is not set but ${present} is: mTLS needs both`,
      );
    }
    const checked: Partial<Record<TlsSource, { data: Buffer }>> = {};
    for (const source of Object.keys(TLS_SOURCES) as TlsSource[]) {
      const data = tls[source];
      if (data) checked[source] = { data: readTlsSource(source, data, vars) };
    }
    if (checked.clientKey) secrets.push(checked.clientKey.data.toString('utf8').trim());
    // Hand envconfig the bytes already read, so the files are read once and cannot change in between.
    profile = { ...profile, tls: { ...tls, ...checked } };
  }

  const connect = toClientOptions(profile);
  const connectTimeoutMs = Number(vars.TEMPORAL_CONNECT_TIMEOUT_MS ?? DEFAULT_CONNECT_TIMEOUT_MS);
  if (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs < 100 || connectTimeoutMs > 600_000) {
    throw new ConfigError('TEMPORAL_CONNECT_TIMEOUT_MS: must be a whole number of milliseconds between 100 and 600000');
  }
  const metadata = connect.connectionOptions.metadata as Record<string, string> | undefined;
  return {
    address: connect.connectionOptions.address,
    namespace: connect.namespace ?? 'default',
    profile: vars.TEMPORAL_PROFILE,
    apiKey: profile.apiKey,
    tls: connect.connectionOptions.tls,
    metadata: metadata && Object.keys(metadata).length > 0 ? metadata : undefined,
    connectTimeoutMs,
    secrets,
  };
}

/** Settings for a server this process started itself: plain, no credentials. */
export function localTemporalSettings(address: string, namespace: string): TemporalSettings {
  return { address, namespace, connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, secrets: [] };
}

function addressOf(settings: TemporalSettings): string {
  return settings.address ?? DEFAULT_TEMPORAL_ADDRESS;
}

export function nativeConnectionOptions(settings: TemporalSettings): NativeConnectionOptions {
  const { tls, apiKey, metadata } = settings;
  return { address: addressOf(settings), tls, apiKey, metadata };
}

/** The worker's options plus a connect timeout (NativeConnection has none). */
export function clientConnectionOptions(settings: TemporalSettings): ConnectionOptions {
  return { ...nativeConnectionOptions(settings), connectTimeout: settings.connectTimeoutMs };
}

// Spelled out: @grpc/grpc-js is only a transitive dependency.
export const GRPC = {
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNAUTHENTICATED: 16,
  UNIMPLEMENTED: 12,
} as const;

function grpcCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number'
    ? err.code
    : undefined;
}

function describeFailure(err: unknown, settings: TemporalSettings): string {
  const raw = err instanceof Error ? err.message : String(err);
  const message = settings.secrets.reduce(
    (text, secret) => (secret.length >= 4 ? text.split(secret).join('[redacted]') : text),
    raw,
  );
  const code = grpcCode(err);
  const auth = settings.apiKey
    ? 'TEMPORAL_API_KEY (or api_key of the profile)'
    : 'the TLS client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH / _KEY_PATH)';
  if (code === GRPC.UNAUTHENTICATED || /unauthenticated|invalid token|Request unauthorized/i.test(raw)) {
    return `the server refused the credentials: check ${auth} (${message})`;
  }
  if (code === GRPC.PERMISSION_DENIED || /PermissionDenied|permission denied/i.test(raw)) {
    return (
      `the credentials are not allowed to use namespace "${settings.namespace}": ` +
      `check ${auth} and TEMPORAL_NAMESPACE (${message})`
    );
  }
  // grpc-js words a TLS failure in OpenSSL's terms, the worker's native connection in rustls's.
  if (/certificate|tls|ssl|handshake|PrivateKey|PEM|InvalidContentType|InvalidMessage|AlertReceived/i.test(raw)) {
    return `TLS failed: check TEMPORAL_TLS* / the profile's [tls] settings and that the server speaks TLS (${message})`;
  }
  if (!/ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(raw) && /deadline|timed out|timeout|within/i.test(raw)) {
    const tlsHint = settings.tls
      ? ', and that the server speaks TLS (TLS is on: set by TEMPORAL_TLS / an API key / the profile)'
      : '';
    return (
      `no answer within ${settings.connectTimeoutMs} ms (TEMPORAL_CONNECT_TIMEOUT_MS): ` +
      `check TEMPORAL_ADDRESS and the network${tlsHint} (${message})`
    );
  }
  return `${message}: check TEMPORAL_ADDRESS and that the server is running`;
}

function connectionError(settings: TemporalSettings, err: unknown): TemporalConnectionError {
  return new TemporalConnectionError(
    `cannot connect to Temporal at ${addressOf(settings)} (namespace "${settings.namespace}"): ` +
      describeFailure(err, settings),
  );
}

function hostAndPort(address: string): { host: string; port: number } {
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(address);
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2]) };
  const separator = address.lastIndexOf(':');
  if (separator <= 0) return { host: address, port: 7233 };
  return { host: address.slice(0, separator), port: Number(address.slice(separator + 1)) };
}

/** A plain TCP connect first, so "nothing listens there" and "no such host" are said as such, at once. */
async function probeTcp(settings: TemporalSettings): Promise<void> {
  const { host, port } = hostAndPort(addressOf(settings));
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) {
    throw new ConfigError(`TEMPORAL_ADDRESS: "${addressOf(settings)}" is not host:port`);
  }
  const socket = net.connect({ host, port });
  try {
    await once(socket, 'connect', { signal: AbortSignal.timeout(settings.connectTimeoutMs) });
  } catch (err) {
    const { name, code, message } = err as NodeJS.ErrnoException;
    if (name === 'AbortError') throw new Error(`no TCP connection within ${settings.connectTimeoutMs} ms`);
    const reason =
      code === 'ECONNREFUSED'
        ? 'connection refused: nothing listens there'
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `host ${host} not found`
          : message;
    throw new Error(`${reason} (${code ?? 'error'})`);
  } finally {
    socket.destroy();
  }
}

/** A client Connection, proven usable. */
export function connectClient(settings: TemporalSettings): Promise<Connection> {
  return connectProven(settings, () => Connection.connect(clientConnectionOptions(settings)));
}

/** The worker's one connection (its workers and its client share it), proven usable as connectClient's. */
export function connectWorkerConnection(settings: TemporalSettings): Promise<NativeConnection> {
  return connectProven(settings, () => connectNative(settings));
}

/** A TCP probe, then the connection; describing the namespace also checks the credentials. Closed on failure. */
async function connectProven<C extends ConnectionLike>(settings: TemporalSettings, connect: () => Promise<C>) {
  const connection = await probeTcp(settings)
    .then(connect)
    .catch((err: unknown) => {
      if (err instanceof ConfigError || err instanceof TemporalConnectionError) throw err;
      throw connectionError(settings, err);
    });
  try {
    await connection.withDeadline(Date.now() + settings.connectTimeoutMs, () =>
      connection.workflowService.describeNamespace({ namespace: settings.namespace }),
    );
  } catch (err) {
    await connection.close().catch(() => undefined);
    if (grpcCode(err) === GRPC.NOT_FOUND) {
      throw new TemporalConnectionError(
        `Temporal at ${addressOf(settings)} has no namespace "${settings.namespace}": ` +
          "check TEMPORAL_NAMESPACE (or the profile's namespace)",
      );
    }
    throw connectionError(settings, err);
  }
  return connection;
}

export async function connectNative(settings: TemporalSettings): Promise<NativeConnection> {
  // Imported here so clients (the sales CLI, other services) never load the worker's native bridge.
  const { NativeConnection } = await import('@temporalio/worker');
  const connecting = NativeConnection.connect(nativeConnectionOptions(settings));
  const timer = new AbortController();
  const timeout = sleep(settings.connectTimeoutMs, undefined, { signal: timer.signal }).then(() => {
    // A connection made after all is closed.
    void connecting.then(
      (late) => late.close(),
      () => undefined,
    );
    throw new Error(`connect timed out after ${settings.connectTimeoutMs} ms`);
  });
  try {
    return await Promise.race([connecting, timeout]);
  } catch (err) {
    throw connectionError(settings, err);
  } finally {
    timer.abort();
  }
}
