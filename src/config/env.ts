import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { assertCredential, type CredentialKind } from './credentials.js';

/**
 * Environment → typed configuration. A service counts as "real" when both its base URL and its key are set;
 * when neither is set the embedded sandbox stands in; half a configuration is an error, never a silent fallback.
 * Errors name the variable and never echo a secret.
 */

export interface ComplianceConfig {
  baseUrl: string;
  apiKey: string;
  /** Needed for organisation-wide keys; omitted for keys bound to one business. */
  businessId: string | undefined;
  timeoutMs: number;
  /** Local stacks only: accept http callback URLs on loopback hosts (the documented rule is public https). */
  allowLoopbackCallbacks: boolean;
  /** ALLOW_INSECURE_HTTP: hosts reached in plain http although not loopback (src/http/base-url.ts). */
  insecureHttpHosts?: string[];
}

export interface AccountingConfig {
  baseUrl: string;
  apiKey: string;
  clientSecret: string | undefined;
  clientId: string | undefined;
  webhookSecret: string | undefined;
  signRequests: boolean;
  signQuery: boolean;
  timeoutMs: number;
  insecureHttpHosts?: string[];
}

export interface AppConfig {
  /** Undefined: use the embedded sandbox's compliance service. */
  compliance: ComplianceConfig | undefined;
  /** Undefined: use the embedded sandbox's accounting service. */
  accounting: AccountingConfig | undefined;
  logLevel: string;
  /**
   * SANDBOX=embedded: the embedded sandbox may stand in for a service that is not configured. Without it a
   * worker refuses to start with a service missing (a production worker must never sign into a sandbox).
   * `npm start` and `npm run demo` set it themselves.
   */
  embeddedSandbox?: boolean;
}

export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
}

/** The process environment, or a test's stand-in for it. */
export type Env = Record<string, string | undefined>;

/**
 * Every secret a worker, the codec server or a CLI reads. Each may be given as `<NAME>_FILE` instead: the path of
 * a file holding it, as Docker and Kubernetes secrets mount them, so the value is in no container's environment.
 * (Payload keys have their own `PAYLOAD_KEYS_FILE`, which src/codec/keys.ts reads.)
 */
export const SECRET_VARIABLES = [
  'COMPLIANCE_API_KEY',
  'ACCOUNTING_API_KEY',
  'ACCOUNTING_CLIENT_SECRET',
  'ACCOUNTING_WEBHOOK_SECRET',
  'PURCHASES_WEBHOOK_SECRET',
  'CALLBACK_SECRET',
  'CODEC_AUTH_TOKEN',
  'TEMPORAL_API_KEY',
] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];

/** A secret is a line or a key, never more: a bigger file is a wrong path, not a secret. */
const SECRET_FILE_MAX_BYTES = 64 * 1024;

function readSecretFile(fileVariable: string, path: string): string {
  try {
    const size = statSync(path).size;
    if (size > SECRET_FILE_MAX_BYTES)
      throw new ConfigError(
        `${fileVariable}: ${path} is ${size} bytes, more than a secret (at most ${SECRET_FILE_MAX_BYTES})`,
      );
    // Editors and `echo` end the file with a newline that is not part of the secret.
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `${fileVariable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
}

/**
 * The environment with each secret's `<NAME>_FILE` read into `<NAME>` (and the `_FILE` entry dropped, so resolving
 * twice reads nothing twice). Entry points resolve once at start-up; the loaders below resolve what they read, so a
 * caller that passes the raw environment gets the same. An empty file counts as unset, like an empty variable.
 * Both forms set is a ConfigError, as is an unreadable file; messages name the variable and the path, never the
 * content.
 */
export function resolveSecretFiles(env: Env, names: readonly SecretVariable[] = SECRET_VARIABLES): Env {
  let resolved: Env | undefined;
  for (const name of names) {
    const fileVariable = `${name}_FILE`;
    const path = env[fileVariable]?.trim();
    if (!path) continue;
    if (env[name]?.trim()) throw new ConfigError(`${name} and ${fileVariable} are both set: set one of them`);
    resolved ??= { ...env };
    resolved[name] = readSecretFile(fileVariable, path);
    delete resolved[fileVariable];
  }
  return resolved ?? env;
}

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function parseWith<T>(schema: z.ZodType<T>, env: Env, name: string, fallback: T): T {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${name}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  return parsed.data;
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });
const timeout = z.coerce.number().int().min(100).max(600_000);

function credential(env: Env, name: string, kind: CredentialKind): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  try {
    return assertCredential(kind, name, value);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function requirePair(env: Env, urlName: string, keyName: string): boolean {
  const hasUrl = read(env, urlName) !== undefined;
  const hasKey = read(env, keyName) !== undefined;
  if (hasUrl !== hasKey) {
    throw new ConfigError(
      `${hasUrl ? keyName : urlName} is not set but ${hasUrl ? urlName : keyName} is: set both to use the real service, or neither to use the embedded sandbox`,
    );
  }
  return hasUrl;
}

function readCompliance(env: Env): ComplianceConfig | undefined {
  if (!requirePair(env, 'COMPLIANCE_BASE_URL', 'COMPLIANCE_API_KEY')) return undefined;
  return {
    baseUrl: parseWith(httpUrl, env, 'COMPLIANCE_BASE_URL', ''),
    apiKey: credential(env, 'COMPLIANCE_API_KEY', 'complianceApiKey') ?? '',
    businessId: read(env, 'COMPLIANCE_BUSINESS_ID'),
    timeoutMs: parseWith(timeout, env, 'COMPLIANCE_TIMEOUT_MS', 30_000),
    allowLoopbackCallbacks: parseWith(booleanText, env, 'COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS', false),
    ...insecureHttpOptIn(env),
  };
}

function readAccounting(env: Env): AccountingConfig | undefined {
  if (!requirePair(env, 'ACCOUNTING_BASE_URL', 'ACCOUNTING_API_KEY')) return undefined;
  const clientSecret = credential(env, 'ACCOUNTING_CLIENT_SECRET', 'accountingClientSecret');
  return {
    baseUrl: parseWith(httpUrl, env, 'ACCOUNTING_BASE_URL', ''),
    apiKey: credential(env, 'ACCOUNTING_API_KEY', 'accountingApiKey') ?? '',
    clientSecret,
    clientId: credential(env, 'ACCOUNTING_CLIENT_ID', 'accountingClientId'),
    webhookSecret: credential(env, 'ACCOUNTING_WEBHOOK_SECRET', 'accountingWebhookSecret'),
    signRequests: parseWith(booleanText, env, 'ACCOUNTING_SIGN_REQUESTS', clientSecret !== undefined),
    signQuery: parseWith(booleanText, env, 'ACCOUNTING_SIGN_QUERY', false),
    timeoutMs: parseWith(timeout, env, 'ACCOUNTING_TIMEOUT_MS', 30_000),
    ...insecureHttpOptIn(env),
  };
}

/** Set only when opted in, so a configuration without it reads as before. */
function insecureHttpOptIn(env: Env): { insecureHttpHosts?: string[] } {
  const hosts = (read(env, 'ALLOW_INSECURE_HTTP') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  if (hosts.some((h) => /^(1|true|yes)$/i.test(h))) {
    throw new ConfigError('ALLOW_INSECURE_HTTP: must name the hosts plain http may reach (e.g. sandbox), not a switch');
  }
  return hosts.length > 0 ? { insecureHttpHosts: hosts } : {};
}

export function loadConfig(rawEnv: Env): AppConfig {
  const env = resolveSecretFiles(rawEnv, [
    'COMPLIANCE_API_KEY',
    'ACCOUNTING_API_KEY',
    'ACCOUNTING_CLIENT_SECRET',
    'ACCOUNTING_WEBHOOK_SECRET',
  ]);
  const accounting = readAccounting(env);
  if (accounting?.signRequests && !accounting.clientSecret) {
    throw new ConfigError('ACCOUNTING_SIGN_REQUESTS is true but ACCOUNTING_CLIENT_SECRET is not set');
  }
  // A configured secret is a promise that every request is signed; an unsigned one would be accepted silently.
  if (accounting && !accounting.signRequests && accounting.clientSecret) {
    throw new ConfigError(
      'ACCOUNTING_SIGN_REQUESTS is false but ACCOUNTING_CLIENT_SECRET is set: requests are signed whenever a client secret is configured; unset the secret to send unsigned requests',
    );
  }
  return {
    compliance: readCompliance(env),
    accounting,
    logLevel: parseWith(
      z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      env,
      'LOG_LEVEL',
      'info',
    ),
    embeddedSandbox:
      parseWith(z.enum(['embedded', 'off'], { error: 'must be "embedded" or "off"' }), env, 'SANDBOX', 'off') ===
      'embedded',
  };
}
