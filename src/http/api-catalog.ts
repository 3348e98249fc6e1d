// Discovery (monitoring-api.md, Conventions 4): `GET /.well-known/api-catalog` (RFC 9727), a linkset
// (RFC 9264) naming the REST API with its OpenAPI document and documentation page, as this
// deployment serves them. The docs page and the OpenAPI document carry the RFC 8288 `Link` header
// that points here. No MCP server runs yet, so the catalog lists the REST API alone.
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addRoute } from './route.js';

export const API_CATALOG_PATH = '/.well-known/api-catalog';
/** RFC 9727's media type: a linkset, with the profile naming the api-catalog. */
const LINKSET_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';

/** The linkset for a deployment reached at `baseUrl` (no trailing slash). */
export function apiCatalog(baseUrl: string) {
  return {
    linkset: [{
      anchor: `${baseUrl}/api/v1`,
      'service-desc': [{ href: `${baseUrl}/api/openapi.json`, type: 'application/vnd.oai.openapi+json;version=3.1' }],
      'service-doc': [{ href: `${baseUrl}/docs`, type: 'text/html' }],
    }],
  };
}

/** The RFC 8288 `Link` header value every page about the API carries. */
export const discoveryLinks = (baseUrl: string): string =>
  [`<${baseUrl}${API_CATALOG_PATH}>; rel="api-catalog"`, `<${baseUrl}/api/openapi.json>; rel="service-desc"`, `<${baseUrl}/docs>; rel="service-doc"`].join(', ');

const Link = Type.Object({ href: Type.String(), type: Type.String() });

export function registerApiCatalog(app: FastifyInstance, publicBaseUrl: string): void {
  const baseUrl = publicBaseUrl.replace(/\/+$/, '');
  const body = JSON.stringify(apiCatalog(baseUrl));
  const links = discoveryLinks(baseUrl);
  // A synchronous hook with three prefix tests: the API's own requests pay next to nothing.
  app.addHook('onSend', (request, reply, payload, done) => {
    const { url } = request;
    if (url.startsWith('/docs') || url.startsWith('/api/openapi.json') || url.startsWith(API_CATALOG_PATH)) reply.header('link', links);
    done(null, payload);
  });
  addRoute(app, {
    method: 'GET', url: API_CATALOG_PATH, auth: 'public', tags: ['meta'],
    summary: 'API catalog (RFC 9727)',
    description: `A linkset (\`application/linkset+json\`, RFC 9727 profile) naming the REST API at \`{auth.public_base_url}/api/v1\` with its OpenAPI document (\`service-desc\`) and documentation page (\`service-doc\`). Also answers HEAD. The docs page, the OpenAPI document and this catalog carry a \`Link\` header with \`rel\` \`api-catalog\`, \`service-desc\` and \`service-doc\`.`,
    response: {
      200: {
        description: 'RFC 9264 linkset.',
        content: { 'application/linkset+json': { schema: Type.Object({
          linkset: Type.Array(Type.Object({ anchor: Type.String(), 'service-desc': Type.Array(Link), 'service-doc': Type.Array(Link) })),
        }) } },
      } as unknown as TSchema,
    },
    handler: async (_request, reply) => reply.type(LINKSET_TYPE).send(body),
  });
}
