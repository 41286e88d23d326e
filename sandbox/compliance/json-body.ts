import type { FastifyInstance } from 'fastify';
import { invalidRequest } from './errors.js';

/**
 * The compliance API takes JSON bodies only. An empty body is read as "no body" (the retry, pull and
 * register operations may be sent without one even when the client sets a JSON content type), and
 * any other content type is refused with 400 by the error handler (fastify answers it as 415).
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      const detail = err instanceof Error ? err.message : 'parse error';
      done(invalidRequest({ field: 'body', message: `is not valid JSON (${detail})` }), undefined);
    }
  });
}
