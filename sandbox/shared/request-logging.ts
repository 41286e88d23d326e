/**
 * The sandbox's request log. Fastify's own writes two multi-line entries per request at info, which buried everything
 * else `npm start` prints; here each request is one debug entry (route, not path: paths carry ids), an answer of 5xx
 * is also a warning, and each period with requests gets one info summary, so the terminal shows the sandbox is
 * being used without a line per call. `LOG_LEVEL=debug` brings every request back. A connection dropped without an
 * answer (a reset fault, a refusing outage, a client giving up) is logged as status 0, as RequestStats records it.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const DEFAULT_SUMMARY_EVERY_MS = 60_000;

export interface RequestLoggingOptions {
  /** How often the info summary is written (only for a period in which requests came). */
  summaryEveryMs?: number;
}

export function installRequestLogging(
  app: FastifyInstance,
  logger: FastifyBaseLogger,
  options: RequestLoggingOptions = {},
): void {
  const everyMs = options.summaryEveryMs ?? DEFAULT_SUMMARY_EVERY_MS;
  let statuses: Record<string, number> = {};
  let requests = 0;
  const logged = new WeakSet<FastifyRequest>();

  const log = (request: FastifyRequest, reply: FastifyReply, status: number) => {
    if (logged.has(request)) return;
    logged.add(request);
    const entry = {
      method: request.method,
      route: request.routeOptions.url ?? '(no route)',
      status,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    logger.debug(entry, 'request');
    if (status === 0) logger.warn(entry, 'connection dropped without an answer');
    else if (status >= 500) logger.warn(entry, 'answered with a server error');
    requests++;
    statuses[status] = (statuses[status] ?? 0) + 1;
  };

  app.addHook('onRequest', async (request, reply) => {
    // onResponse never runs when the socket is destroyed before an answer was written.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) log(request, reply, 0);
    });
  });
  app.addHook('onResponse', async (request, reply) => log(request, reply, reply.statusCode));

  const summarise = () => {
    if (requests === 0) return;
    logger.info(
      { requests, statuses, periodSeconds: Math.round(everyMs / 1000) },
      `requests in the last ${formatPeriod(everyMs)}`,
    );
    requests = 0;
    statuses = {};
  };
  const timer = setInterval(summarise, everyMs);
  // The summary must never keep a process alive that is otherwise done.
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}

function formatPeriod(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
