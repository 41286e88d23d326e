import type { FastifyInstance } from 'fastify';
import { applicationOf } from '../auth.js';
import { paginate, parsePaging } from '../list-query.js';

/** A8: the key's application's companies in the list envelope. */
export function companiesRoutes(app: FastifyInstance): void {
  app.get('/companies', async (request) => {
    const paging = parsePaging(request.query as Record<string, unknown>);
    const companies = applicationOf(request).companies.map(({ id, name }) => ({ id, name }));
    return paginate(companies, paging);
  });
}
