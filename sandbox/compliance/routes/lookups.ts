import type { FastifyInstance } from 'fastify';
import { CODE_LISTS, ITEM_CLASSIFICATIONS } from '../lookups-data.js';
import { ClassificationQuerySchema, CodeListQuerySchema, parseQuery } from '../requests.js';

/** Lookups (C24): any valid key, no scope (C39); an unknown list id gives an empty list. */
export function lookupRoutes(app: FastifyInstance): void {
  app.get('/v1/lookups/code-lists', async (request) => {
    const { listId } = parseQuery(CodeListQuerySchema, request.query);
    return { data: { codeLists: CODE_LISTS.filter((list) => listId === undefined || list.id === listId) } };
  });

  app.get('/v1/lookups/item-classifications', async (request) => {
    const { search } = parseQuery(ClassificationQuerySchema, request.query);
    const needle = search?.toLowerCase();
    return {
      data: {
        classifications: ITEM_CLASSIFICATIONS.filter(
          (c) => needle === undefined || c.code.includes(needle) || c.name.toLowerCase().includes(needle),
        ),
      },
    };
  });
}
