import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { parseDuration } from '../contracts/duration.js';
import { assertCredential, type CredentialKind } from './credentials.js';

/** A service is set by both its base URL and key, or neither (the sandbox may stand in). Errors name no secret. */

export type ComplianceConfig = NonNullable<ReturnType<typeof readCompliance>>;
export type AccountingConfig = NonNullable<ReturnType<typeof readAccounting>>;

export interface AppConfig {
  compliance: ComplianceConfig | undefined;
  accounting: AccountingConfig | undefined;
  logLevel: string;
  /** SANDBOX=embedded: without it a worker refuses to start with a service missing (never sign into a sandbox). */
  embeddedSandbox?: boolean;
}

export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

export const SERVICE_SECRETS = [
  'COMPLIANCE_API_KEY',
  'ACCOUNTING_API_KEY',
  'ACCOUNTING_CLIENT_SECRET',
  'ACCOUNTING_WEBHOOK_SECRET',
] as const;

/** Every secret read; each may be given as `<NAME>_FILE` instead, as Docker and Kubernetes secrets mount them. */
export const SECRET_VARIABLES = [
  ...SERVICE_SECRETS,
  'PURCHASES_WEBHOOK_SECRET',
  'CALLBACK_SECRET',
  'CODEC_AUTH_TOKEN',
  'TEMPORAL_API_KEY',
] as const;
type SecretVariable = (typeof SECRET_VARIABLES)[number];

/** A secret is a line or a key, never more: a bigger file is a wrong path, not a secret. */
const SECRET_FILE_MAX_BYTES = 64 * 1024;

/** `read(path)`, whose failure names the setting and the path (and the error's code), never the content. */
export function readSettingFile<T>(setting: string, path: string, read: (path: string) => T): T {
  try {
    return read(path);
  } catch (err) {
    throw new ConfigError(`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

export function readSecretFile(fileVariable: string, path: string): string {
  const { size } = readSettingFile(fileVariable, path, (file) => statSync(file));
  if (size > SECRET_FILE_MAX_BYTES)
    throw new ConfigError(
      `${fileVariable}: ${path} is ${size} bytes, more than a secret (at most ${SECRET_FILE_MAX_BYTES})`,
    );
  // Editors and `echo` end the file with a newline that is not part of the secret.
  return readSettingFile(fileVariable, path, (file) => readFileSync(file, 'utf8')).trim();
}

/** `<NAME>_FILE` read into `<NAME>` (an empty file is unset), then dropped so that resolving twice reads once. */
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

export function readVariable(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function splitList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function parseWith<T>(schema: z.ZodType<T>, env: Env, name: string, fallback: T): T {
  const raw = readVariable(env, name);
  if (raw === undefined) return fallback;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${name}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  return parsed.data;
}

export function boundedDuration(min: number, max: number, range: string, example: string) {
  return z.string().transform((text, ctx) => {
    const ms = parseDuration(text.trim());
    if (ms === undefined || ms < min || ms > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration from ${range} with its unit, e.g. ${example} (got ${JSON.stringify(text)})`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });
const timeout = z.coerce.number().int().min(100).max(600_000);
const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const sandboxMode = z.enum(['embedded', 'off'], { error: 'must be "embedded" or "off"' });

export function readCredential(env: Env, name: string, kind: CredentialKind): string | undefined {
  const value = readVariable(env, name);
  if (value === undefined) return undefined;
  try {
    return assertCredential(kind, name, value);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function requirePair(env: Env, urlName: string, keyName: string): boolean {
  const hasUrl = readVariable(env, urlName) !== undefined;
  const hasKey = readVariable(env, keyName) !== undefined;
  if (hasUrl !== hasKey) {
    throw new ConfigError(
      `${hasUrl ? keyName : urlName} is not set but ${hasUrl ? urlName : keyName} is: set both to use the real ` +
        'service, or neither to use the embedded sandbox',
    );
  }
  return hasUrl;
}

function readCompliance(env: Env) {
  if (!requirePair(env, 'COMPLIANCE_BASE_URL', 'COMPLIANCE_API_KEY')) return undefined;
  return {
    baseUrl: parseWith(httpUrl, env, 'COMPLIANCE_BASE_URL', ''),
    apiKey: readCredential(env, 'COMPLIANCE_API_KEY', 'complianceApiKey') ?? '',
    // Needed for organisation-wide keys; omitted for keys bound to one business.
    businessId: readVariable(env, 'COMPLIANCE_BUSINESS_ID'),
    timeoutMs: parseWith(timeout, env, 'COMPLIANCE_TIMEOUT_MS', 30_000),
    // Local stacks only: accept http callback URLs on loopback hosts (the documented rule is public https).
    allowLoopbackCallbacks: parseWith(booleanText, env, 'COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS', false),
    ...insecureHttpOptIn(env),
  };
}

function readAccounting(env: Env) {
  if (!requirePair(env, 'ACCOUNTING_BASE_URL', 'ACCOUNTING_API_KEY')) return undefined;
  const clientSecret = readCredential(env, 'ACCOUNTING_CLIENT_SECRET', 'accountingClientSecret');
  return {
    baseUrl: parseWith(httpUrl, env, 'ACCOUNTING_BASE_URL', ''),
    apiKey: readCredential(env, 'ACCOUNTING_API_KEY', 'accountingApiKey') ?? '',
    clientSecret,
    clientId: readCredential(env, 'ACCOUNTING_CLIENT_ID', 'accountingClientId'),
    webhookSecret: readCredential(env, 'ACCOUNTING_WEBHOOK_SECRET', 'accountingWebhookSecret'),
    signRequests: parseWith(booleanText, env, 'ACCOUNTING_SIGN_REQUESTS', clientSecret !== undefined),
    signQuery: parseWith(booleanText, env, 'ACCOUNTING_SIGN_QUERY', false),
    timeoutMs: parseWith(timeout, env, 'ACCOUNTING_TIMEOUT_MS', 30_000),
    ...insecureHttpOptIn(env),
  };
}

/** Hosts reached in plain http although not loopback (src/http/base-url.ts). */
function insecureHttpOptIn(env: Env): { insecureHttpHosts?: string[] } {
  const hosts = splitList(env.ALLOW_INSECURE_HTTP);
  if (hosts.some((h) => /^(1|true|yes)$/i.test(h))) {
    throw new ConfigError('ALLOW_INSECURE_HTTP: must name the hosts plain http may reach (e.g. sandbox), not a switch');
  }
  return hosts.length > 0 ? { insecureHttpHosts: hosts } : {};
}

export function loadConfig(rawEnv: Env): AppConfig {
  const env = resolveSecretFiles(rawEnv, SERVICE_SECRETS);
  const accounting = readAccounting(env);
  if (accounting?.signRequests && !accounting.clientSecret) {
    throw new ConfigError('ACCOUNTING_SIGN_REQUESTS is true but ACCOUNTING_CLIENT_SECRET is not set');
  }
  // A configured secret is a promise that every request is signed; an unsigned one would be accepted silently.
  if (accounting && !accounting.signRequests && accounting.clientSecret) {
    throw new ConfigError(
      'ACCOUNTING_SIGN_REQUESTS is false but ACCOUNTING_CLIENT_SECRET is set: requests are signed whenever a client ' +
        'secret is configured; unset the secret to send unsigned requests',
    );
  }
  return {
    compliance: readCompliance(env),
    accounting,
    logLevel: parseWith(logLevel, env, 'LOG_LEVEL', 'info'),
    embeddedSandbox: parseWith(sandboxMode, env, 'SANDBOX', 'off') === 'embedded',
  };
}
