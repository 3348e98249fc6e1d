// The org's tag inventory (`GET /api/v1/tags`): every tag its targets carry, with how many targets carry it.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Executor } from '../db/db.js';
import { addRoute, listOf, Pagination } from '../http/route.js';
import type { Services } from '../services.js';

export const ListTagsQuery = Type.Object({
  ...Pagination,
  q: Type.Optional(Type.String({ maxLength: 1024, description: 'Case-insensitive prefix of the tag; `%`, `_` and `\\` match themselves.' })),
});

export const TagCount = Type.Object({
  tag: Type.String(),
  count: Type.Integer({ minimum: 1, description: 'Targets of the org carrying the tag.' }),
}, { additionalProperties: false });

export const TagList = listOf('tags', TagCount, { order: 'Ordered by tag (code point order).', total: 'Distinct tags matching `q`.' });

export type TagListT = Static<typeof TagList>;

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * One statement: unnest the org's tags, group them, and answer the page with the total.
 * Ordered with the C collation so both stores (and any database locale) agree.
 */
export async function listTags(db: Executor, orgId: string, q: string | undefined, page: { limit: number; offset: number }): Promise<TagListT> {
  const prefix = q === undefined || q === '' ? null : `${likeEscape(q)}%`;
  const [row] = await db.query<{ total: number; tags: Array<{ tag: string; count: number }> }>(
    `WITH g AS (
       SELECT tag, count(DISTINCT t.id)::int AS count
         FROM targets t CROSS JOIN LATERAL unnest(t.tags) AS tag
        WHERE t.org_id = $1 AND ($2::text IS NULL OR tag ILIKE $2::text ESCAPE '\\')
        GROUP BY tag)
     SELECT (SELECT count(*)::int FROM g) AS total,
            COALESCE((SELECT json_agg(json_build_object('tag', p.tag, 'count', p.count) ORDER BY p.tag COLLATE "C")
                        FROM (SELECT tag, count FROM g ORDER BY tag COLLATE "C" LIMIT $3 OFFSET $4) p), '[]'::json) AS tags`,
    [orgId, prefix, page.limit, page.offset]);
  return { tags: row?.tags ?? [], total: row?.total ?? 0, limit: page.limit, offset: page.offset };
}

export function registerTagRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/api/v1/tags', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "The org's tags with target counts",
    description: 'Every tag carried by at least one target of the org, with the number of targets carrying it, ordered by tag. `q` keeps the tags starting with it, ignoring case.',
    querystring: ListTagsQuery,
    response: { 200: TagList },
    handler: async (request) => {
      const { limit = 50, offset = 0, q } = request.query;
      return listTags(services.db, request.auth!.org!.id, q, { limit, offset });
    },
  });
}
