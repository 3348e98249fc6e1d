// Conventions 3: the OpenAPI 3.1 document describes every route the app serves, with its auth and
// error responses, and the /docs explorer works on an offline machine.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Type } from '@sinclair/typebox';
import { addRoute } from '../../src/http/route.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { $ref?: string; content?: { 'application/json'?: { schema?: { $ref?: string } } } }>;
  parameters?: Array<{ in: string; name: string }>;
}
type Doc = { openapi: string; info: { description: string }; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } };

/** `[METHOD, /path/{param}]` for every route in `app.printRoutes()` (a tree, one node per line). */
function registeredRoutes(tree: string): Array<[string, string]> {
  const stack: string[] = [];
  const routes: Array<[string, string]> = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of match[3]?.split(', ') ?? []) routes.push([method, path]);
  }
  return routes;
}

const errorRef = (op: Operation, status: number): string | undefined => op.responses[status]?.content?.['application/json']?.schema?.$ref;

describe('OpenAPI document and explorer', () => {
  let t: TestApp;
  let doc: Doc;

  before(async () => {
    t = await startTestApp({
      extraRoutes: (app) => {
        addRoute(app, {
          method: 'POST', url: '/api/v1/probe-scoped/:id', auth: 'user', scope: 'targets:write', tags: ['probe'], summary: 'probe',
          params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
          body: Type.Object({ name: Type.String() }, { additionalProperties: false }),
          response: { 200: Type.Object({ ok: Type.Boolean() }) }, handler: async () => ({ ok: true }),
        });
      },
    });
    const res = await t.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    doc = res.json() as Doc;
  });
  after(async () => { await t.close(); });

  it('validates as OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
  });

  it('the validator is real: a broken document fails it', async () => {
    const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, { responses: unknown }>> };
    broken.paths['/healthz']!.get!.responses = 'none';
    assert.equal((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid, false);
  });

  it('documents every route Fastify registered', () => {
    const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false }));
    assert.ok(routes.length > 20, `parsed ${routes.length} routes`);
    assert.ok(routes.some(([m, p]) => m === 'POST' && p === '/api/v1/probe-scoped/{id}'), 'the parser sees the probe route');
    const missing = routes
      // HEAD follows GET; OPTIONS answers any API path (the document's description says so).
      .filter(([method, path]) => method !== 'HEAD' && method !== 'OPTIONS' && path !== '/docs' && !path.startsWith('/docs/'))
      .filter(([method, path]) => !doc.paths[path]?.[method.toLowerCase()])
      .map(([method, path]) => `${method} ${path}`);
    assert.deepEqual(missing, []);
    assert.match(doc.info.description, /OPTIONS on any `\/api\/v1` path/);
    for (const path of ['/healthz', '/readyz', '/api/openapi.json', '/api/v1/regions', '/operator/regions/{id}']) assert.ok(doc.paths[path], path);
  });

  it('every schema compiles as JSON Schema 2020-12, as a client\'s validator reads it (tuples as prefixItems)', () => {
    const ajv = new Ajv2020.default({ strict: false, allErrors: false });
    addFormats.default(ajv);
    const base = 'https://keepwatch.test/openapi.json';
    ajv.addSchema({ ...doc, $id: base });
    const pointer = (...parts: string[]) => `${base}#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
    const schemas: string[] = Object.keys(doc.components.schemas).map((name) => pointer('components', 'schemas', name));
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops) as Array<[string, Operation & { requestBody?: { content: Record<string, unknown> } }]>) {
        for (const type of Object.keys(op.requestBody?.content ?? {})) schemas.push(pointer('paths', path, method, 'requestBody', 'content', type, 'schema'));
        for (const [status, res] of Object.entries(op.responses)) {
          for (const type of Object.keys((res as { content?: Record<string, unknown> }).content ?? {})) schemas.push(pointer('paths', path, method, 'responses', status, 'content', type, 'schema'));
        }
      }
    }
    assert.ok(schemas.length > 200, `${schemas.length} schemas`);
    for (const ref of schemas) assert.doesNotThrow(() => ajv.getSchema(ref), ref);
    const basicAuth = (doc.components.schemas.Target as { properties: { check: { oneOf: Array<{ properties: Record<string, { anyOf?: unknown[] }> }> } } })
      .properties.check.oneOf.find((kind) => kind.properties.basic_auth)!.properties.basic_auth!.anyOf![0];
    assert.deepEqual([(basicAuth as { items?: unknown }).items, 'additionalItems' in (basicAuth as object), ((basicAuth as { prefixItems?: unknown[] }).prefixItems ?? []).length], [false, false, 2]);
  });

  it('requires in a request body only what a client must send: a field with a default is optional', () => {
    type Obj = { required?: string[]; properties?: Record<string, unknown>; oneOf?: Obj[] };
    const body = (path: string, method: string) => (doc.paths[path]![method] as unknown as { requestBody: { content: { 'application/json': { schema: Obj } } } }).requestBody.content['application/json'].schema;
    const kinds = (body('/api/v1/targets', 'post').properties!.check as Obj).oneOf!;
    const required = Object.fromEntries(kinds.map((kind) => [(kind.properties!.type as { const?: string; enum?: string[] }).enum?.[0] ?? (kind.properties!.type as { const: string }).const, kind.required ?? []]));
    assert.deepEqual(required.http, ['type', 'url']);
    assert.deepEqual(required.heartbeat, ['type']);
    assert.deepEqual(required.tls_cert, ['type', 'host']);
    // A response still says every field is there.
    const answered = (doc.components.schemas.Target as { properties: { check: Obj } }).properties.check.oneOf!.find((k) => k.properties!.method)!;
    assert.ok(answered.required!.includes('method') && answered.required!.includes('timeout'));
  });

  it('names every operation, uniquely, and declares exactly the parameters its path holds', () => {
    const ids: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
      for (const [method, op] of Object.entries(ops) as Array<[string, Operation & { operationId?: string }]>) {
        assert.ok(op.operationId, `${method} ${path}`);
        ids.push(op.operationId);
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
        assert.deepEqual(declared, templated, `${method} ${path}`);
      }
    }
    assert.equal(new Set(ids).size, ids.length);
    assert.equal((doc.paths['/api/v1/targets/{id}/check-now']!.post as { operationId?: string }).operationId, 'postTargetsByIdCheckNow');
    const headers = (path: string, method: string) => (doc.paths[path]![method]!.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name).sort();
    assert.deepEqual(headers('/api/v1/targets/{id}/duplicate', 'post'), ['idempotency-key', 'x-service-org']);
    assert.deepEqual(headers('/api/v1/targets', 'post'), ['x-service-org']);
  });

  it('documents the content type each page and the catalog answer with, and the errors every mutation can meet', () => {
    const typesOf = (path: string, method: string, status: number) => Object.keys((doc.paths[path]![method]!.responses[status] as { content?: object }).content ?? {});
    for (const path of ['/act/{token}', '/verify/channel/{token}']) {
      for (const method of ['get', 'post']) for (const status of [200, 404]) assert.deepEqual(typesOf(path, method, status), ['text/html'], `${method} ${path} ${status}`);
    }
    assert.deepEqual(typesOf('/.well-known/api-catalog', 'get', 200), ['application/linkset+json']);
    for (const [path, ops] of Object.entries(doc.paths).filter(([p]) => p.startsWith('/api/v1/') || p.startsWith('/operator/'))) {
      for (const [method, op] of Object.entries(ops).filter(([m]) => ['post', 'put', 'patch', 'delete'].includes(m))) {
        for (const status of [400, 413, 415, 422]) assert.ok(op.responses[status], `${method} ${path} ${status}`);
      }
    }
  });

  it('documents Location on the 201 of every single-resource create', () => {
    const headerOf = (path: string) => (doc.paths[path]!.post!.responses[201] as { headers?: Record<string, { schema: { type: string } }> }).headers?.Location?.schema.type;
    const creates = ['/api/v1/targets', '/api/v1/notification-channels', '/api/v1/maintenance', '/api/v1/incidents', '/api/v1/variables', '/operator/regions', '/operator/agents'];
    for (const path of creates) assert.equal(headerOf(path), 'string', path);
    // Batches and sub-resources have no one resource to point to.
    for (const path of ['/api/v1/targets/bulk', '/operator/users']) assert.equal(headerOf(path), undefined, path);
  });

  it('gives user routes the apiToken scheme with their scope, and 401/429 as the Error schema', () => {
    const userOps = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([, op]) => op.security?.some((s) => 'apiToken' in s)).map(([m, op]) => [`${m} ${path}`, op] as const));
    assert.ok(userOps.length >= 3);
    for (const [name, op] of userOps) {
      assert.deepEqual(op.security!.map((s) => Object.keys(s)), [['apiToken']], name);
      assert.equal(errorRef(op, 401), '#/components/schemas/Error', name);
      assert.equal(errorRef(op, 429), '#/components/schemas/Error', name);
      assert.equal((op.responses[429] as { headers?: Record<string, { schema: { type: string } }> }).headers?.['Retry-After']?.schema.type, 'integer', name);
    }
    assert.deepEqual(doc.paths['/api/v1/regions']!.get!.security, [{ apiToken: [] }]);
    const scoped = doc.paths['/api/v1/probe-scoped/{id}']!.post!;
    assert.deepEqual(scoped.security, [{ apiToken: ['targets:write'] }]);
    for (const status of [400, 401, 403, 404, 415, 422, 429]) assert.equal(errorRef(scoped, status), '#/components/schemas/Error', `probe ${status}`);
    assert.ok(scoped.parameters?.some((p) => p.in === 'header' && p.name === 'x-service-org'), 'org-scoped routes document X-Service-Org');
    assert.ok(doc.components.securitySchemes.apiToken);
    assert.ok(doc.components.schemas.Error);
  });

  it('gives operator routes the operatorSecret scheme, and public routes none', () => {
    const operatorPaths = Object.entries(doc.paths).filter(([path]) => path.startsWith('/operator/'));
    assert.ok(operatorPaths.length >= 5);
    for (const [path, ops] of operatorPaths) {
      for (const [method, op] of Object.entries(ops)) {
        assert.deepEqual(op.security, [{ operatorSecret: [] }], `${method} ${path}`);
        assert.equal(errorRef(op, 404), '#/components/schemas/Error', `${method} ${path}`);
      }
    }
    for (const path of ['/healthz', '/readyz', '/api/openapi.json']) assert.equal(doc.paths[path]!.get!.security, undefined, path);
    assert.equal(errorRef(doc.paths['/readyz']!.get!, 503), '#/components/schemas/Error');
  });

  it('every /api/v1 operation requires a token', () => {
    for (const [path, ops] of Object.entries(doc.paths).filter(([p]) => p.startsWith('/api/v1/'))) {
      for (const [method, op] of Object.entries(ops)) assert.ok(op.security?.length, `${method} ${path}`);
    }
  });

  it('serves the explorer at /docs with every asset from /docs/static and no other host', async () => {
    const page = await t.inject({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /swagger-ui/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length >= 3, 'the page loads scripts and styles');
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(https?:)?\/\//i, asset);
      assert.ok(asset.startsWith('/docs/static/'), asset);
      const res = await t.inject({ method: 'GET', url: asset });
      assert.equal(res.statusCode, 200, asset);
      assert.ok(res.body.length > 0, asset);
    }
    const init = await t.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    const code = init.body.replace(/^\s*\/\/.*$/gm, '');
    assert.deepEqual(code.match(/https?:\/\/[^\s'"`)]+/g) ?? [], [], 'the initializer calls no other host');
    assert.match(code, /validatorUrl"?\s*:\s*null/, 'no online validator badge');
    const spec = await t.inject({ method: 'GET', url: '/docs/json' });
    assert.equal(spec.statusCode, 200);
    assert.equal((spec.json() as Doc).openapi, '3.1.0');
  });
});
