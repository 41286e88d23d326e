import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { installRequestLogging, type RequestLoggingOptions } from './request-logging.js';

/** Both services refuse bodies over 1 MiB with 413 (C50). */
const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A fastify instance for one emulated service, logging through the given pino logger or not at all; its requests are
 * logged by request-logging.ts (fastify's own per-request entries are off).
 */
export function createServiceApp(logger: Logger | false, options: RequestLoggingOptions = {}): FastifyInstance {
  if (!logger) return Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES });
  const loggerInstance: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance,
    bodyLimit: BODY_LIMIT_BYTES,
    logController: new LogController({ disableRequestLogging: true }),
  });
  installRequestLogging(app, loggerInstance, options);
  return app;
}
