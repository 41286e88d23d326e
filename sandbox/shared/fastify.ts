import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** Both services refuse bodies over 1 MiB with 413 (C50). */
const BODY_LIMIT_BYTES = 1024 * 1024;

/** A fastify instance for one emulated service, logging through the given pino logger or not at all. */
export function createServiceApp(logger: Logger | false): FastifyInstance {
  if (!logger) return Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES });
  const loggerInstance: FastifyBaseLogger = logger;
  return Fastify({ loggerInstance, bodyLimit: BODY_LIMIT_BYTES });
}
