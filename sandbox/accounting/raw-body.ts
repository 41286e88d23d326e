import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from './errors.js';

const rawBodies = new WeakMap<FastifyRequest, Buffer>();
const EMPTY = Buffer.alloc(0);

/** The body bytes exactly as received: a signature covers these, not a re-serialisation. */
export function rawBodyOf(request: FastifyRequest): Buffer {
  return rawBodies.get(request) ?? EMPTY;
}

/**
 * Keeps every body's bytes for signature checks, parses JSON bodies, and treats an empty JSON body as no
 * body (the process endpoint takes none, and some clients still send the JSON content type).
 */
export function installRawBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    rawBodies.set(request, bytes);
    if (bytes.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(bytes.toString('utf8')) as unknown);
    } catch {
      done(badRequest('Request body is not valid JSON'), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    rawBodies.set(request, body as Buffer);
    done(null, body);
  });
}
