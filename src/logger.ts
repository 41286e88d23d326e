import { pino, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { ConfigError, type Env } from './config/env.js';

// Redaction works on object paths only: never interpolate a secret or a callback URL (a capability) into a message.
const SECRET_FIELDS = ['apiKey', 'clientSecret', 'webhookSecret', 'callbackUrl', 'callbackToken'];
const SECRET_HEADERS = ['headers.authorization', 'headers["x-api-key"]', 'headers["x-signature"]'];
export const REDACTED_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  ...SECRET_HEADERS,
  ...SECRET_HEADERS.map((path) => `req.${path}`),
  'config.compliance.apiKey',
  ...['apiKey', 'clientSecret', 'webhookSecret'].map((field) => `config.accounting.${field}`),
];

/** `LOG_FORMAT=pretty` or `json`; unset: readable lines on a terminal, JSON everywhere else. */
export function prettyLogs(env: Env = process.env, terminal = process.stdout.isTTY === true): boolean {
  const format = env.LOG_FORMAT?.trim().toLowerCase();
  if (format === 'pretty') return true;
  if (format === 'json') return false;
  if (format) throw new ConfigError(`LOG_FORMAT: must be pretty or json, not ${JSON.stringify(env.LOG_FORMAT)}`);
  return terminal;
}

/** `stderr`: for CLIs whose stdout is their answer. */
export function createLogger(options: { level?: string; name?: string; stderr?: boolean } = {}): Logger {
  const settings: LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    ...(options.name ? { name: options.name } : {}),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  const fd = options.stderr ? 2 : 1;
  const terminal = (options.stderr ? process.stderr : process.stdout).isTTY === true;
  // Redaction happens before the stream: a readable line hides the same secrets as a JSON one.
  return prettyLogs(process.env, terminal)
    ? pino(
        settings,
        pretty({
          colorize: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
          sync: true,
          destination: fd,
        }),
      )
    : pino(settings, pino.destination(fd));
}

export type { Logger };
