/**
 * A callback URL is a credential (its last segment is the token), so request logs show its path only up
 * to the workflow id, cut to a small bound (a sender chooses the URL's length). Hosts that log requests
 * themselves can use `callbackRequestSerializer` as their pino `req` serializer.
 */
import type { FastifyRequest } from 'fastify';
import { clip } from './answer-log.js';

const REDACTED_SEGMENT = '[redacted]';

/** `/callbacks/<workflowId>/<token>?…` → `/callbacks/<workflowId>/[redacted]`; other URLs unchanged. */
export function redactCallbackPath(url: string): string {
  return url.replace(/(\/callbacks\/[^/?#]*)[/?#].*$/s, `$1/${REDACTED_SEGMENT}`);
}

export interface LoggedRequest {
  method: string;
  url: string;
  host: string | undefined;
  remoteAddress: string;
  remotePort: number | undefined;
}

/** Fastify's default request serializer, with the token removed from the URL and every text clipped. */
export function callbackRequestSerializer(request: FastifyRequest): LoggedRequest {
  return {
    method: clip(request.method),
    url: clip(redactCallbackPath(request.url)),
    host: request.host === undefined ? undefined : clip(request.host),
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
