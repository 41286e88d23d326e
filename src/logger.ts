import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * Paths that may hold a secret anywhere a request, a configuration or an error is logged. Redaction works on
 * object paths only, so code never interpolates a secret or a callback URL (it carries a capability token)
 * into a message.
 */
export const REDACTED_PATHS = [
  'apiKey',
  'clientSecret',
  'webhookSecret',
  'callbackUrl',
  'callbackToken',
  '*.apiKey',
  '*.clientSecret',
  '*.webhookSecret',
  '*.callbackUrl',
  '*.callbackToken',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-signature"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-signature"]',
  'config.compliance.apiKey',
  'config.accounting.apiKey',
  'config.accounting.clientSecret',
  'config.accounting.webhookSecret',
];

export function createLogger(options: { level?: string; name?: string } & Pick<LoggerOptions, 'base'> = {}): Logger {
  return pino({
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    ...(options.name ? { name: options.name } : {}),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  });
}

export type { Logger };
