// OpenAPI 3.1 from the route schemas (`GET /api/openapi.json`) and the explorer at `/docs`,
// served from the installed swagger-ui assets (no CDN).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { shapeDocument } from './openapi-shape.js';
import { addRoute, ErrorSchema } from './route.js';

export async function installOpenApi(app: FastifyInstance, version: string): Promise<void> {
  app.addSchema(ErrorSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Keepwatch API',
        version,
        description: [
          'Uptime monitoring with public status pages. Every `/api/v1` request needs `Authorization: Bearer sm_live_...`;',
          'a token not bound to an org names one with `X-Service-Org: <slug>`.',
          'Errors are `{"error": {"code", "message", "field"?}}`. Lists are `{"<plural>": [...], "total", "limit", "offset"}`.',
          'Bodies are strict: an unknown or read-only key is 422 `INVALID_JSON` naming its path and listing the accepted keys.',
          'A query parameter holding a number is a plain decimal (`limit=20`, `-1`, `2.5`): `0x10`, `1e2` or ` 10` is 400 `VALIDATION_FAILED` naming it. Unknown query parameters are ignored.',
          'A route that documents no body (acknowledge, resolve, check-now, test sends, deletes) takes none or `{}`: any key is 422 `INVALID_JSON` with `allowed: []`.',
          'Rate budgets are per plan and minute, counted for the account and then the user; 429 `RATE_LIMITED` carries `Retry-After`. A request draws on one budget: `bulk_ops_per_minute` (`/bulk...` and `/duplicate` paths), `test_now_per_minute` (`/test`), `check_now_per_minute` (`/check-now`), `support` (`/support`), else `api_reads_per_minute` (GET, HEAD, OPTIONS) or `api_writes_per_minute` (POST, PATCH, DELETE, and PUT, a write too).',
          'OPTIONS on any `/api/v1` path answers 204 with `Allow` (token checked; it draws on `api_reads_per_minute`, as GET does); a method the path does not take is 405 `METHOD_NOT_ALLOWED` with `Allow`, a path no route serves 404 `NOT_FOUND`.',
          'Mutations are `Cache-Control: no-store`; reads `private, max-age=10` (the dashboard summary 5), with `Vary: Authorization, Cookie, X-Service-Org`.',
        ].join('\n'),
      },
      components: {
        securitySchemes: {
          apiToken: { type: 'http', scheme: 'bearer', description: 'API token `sm_live_...`; the requirement lists the scope a route needs.' },
          operatorSecret: { type: 'http', scheme: 'bearer', description: 'The operator secret (`operator.secret`).' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}` },
    transformObject: (document) => shapeDocument('openapiObject' in document ? document.openapiObject : document.swaggerObject),
  });
  // validatorUrl null: the explorer must not call validator.swagger.io (offline installs, privacy).
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, validatorUrl: null } });
  addRoute(app, {
    method: 'GET', url: '/api/openapi.json', auth: 'public', tags: ['meta'],
    summary: 'This OpenAPI 3.1 document',
    response: { 200: Type.Object({ openapi: Type.String() }, { additionalProperties: true, description: 'An OpenAPI 3.1 document.' }) },
    handler: async () => app.swagger(),
  });
}
