// Property-based tests of query strings and path ids: every GET route of the OpenAPI document with
// query parameters gets odd values in them (huge and non-finite numbers, offsets past bigint, NUL,
// lone surrogates, unstorable timestamps, long strings), and every route with an `{id}` gets ids
// that are not lower-case v7 uuids. Never a 5xx; a refused query parameter is named as the field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, httpTarget, overrideCaps, type Api } from '../targets/helpers.js';
import { assertEnvelope, NUM_RUNS } from './fuzz-kit.js';

interface Parameter { in: string; name: string }
type Doc = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

// Raw query text: what reaches the parser, percent-encoded where a URL needs it.
const oddQueryValue = fc.oneof(
  fc.constantFrom(
    '1e400', '-1e400', 'Infinity', 'NaN', '-0', '1.5', '0x10', ' 1', '', '-1', '2147483648', '-2147483649', '9007199254740993',
    '9999999999999', '9223372036854775808', '99999999999999999999999', '1e308', 'true', '[]',
    '%00', 'a%00b', '%ED%A0%80', '%FF', '%C0%80', 'x'.repeat(5000),
    '2028-06-30T23%3A59%3A60Z', '0000-01-01T00%3A00%3A00Z', '9999-12-31T23%3A59%3A59-14%3A00', '0001-01-01T00%3A00%3A00%2B14%3A00',
    '%2B275760-09-13T00%3A00%3A00Z', '2024-02-30T00%3A00%3A00Z', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '00000000-0000-0000-0000-000000000000',
  ),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
  fc.integer().map(String),
  fc.double().map(String),
);
const oddId = fc.oneof(
  fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '%00', '%ED%A0%80', '1e400', 'x'.repeat(2000)),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid({ version: [1, 4, 5] }),
  // A uuid as a URN passes a lax uuid format, and PostgreSQL's uuid type refuses it.
  fc.uuid().map((u) => `urn:uuid:${u}`),
);

describe('fuzzing query strings and path ids', () => {
  let t: TestApp;
  let api: Api;
  let doc: Doc;
  let targetId: string;

  before(async () => {
    t = await startTestApp();
    const tenant = await createTenantWithToken(t);
    await overrideCaps(t, tenant.accountId, { api_writes_per_minute: 1_000_000, api_reads_per_minute: 1_000_000 });
    api = client(t, tenant.token);
    doc = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    const created = await api('POST', '/api/v1/targets', httpTarget());
    assert.equal(created.statusCode, 201, created.body);
    targetId = (created.json() as { id: string }).id;
  });
  after(async () => { await t.close(); });

  const apiRoutes = () => Object.entries(doc.paths).filter(([path]) => path.startsWith('/api/v1/'));

  it('odd query values at every listing and history read get success or a 400 naming the parameter, never a 5xx', async () => {
    const reads = apiRoutes().flatMap(([path, ops]) => {
      const names = (ops.get?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      return names.length ? [{ url: path.replaceAll('{id}', targetId), names }] : [];
    });
    assert.ok(reads.some((r) => r.names.includes('offset')) && reads.some((r) => r.names.includes('from')), 'the document lists the paginated and ranged reads');
    for (const { url, names } of reads) {
      await fc.assert(fc.asyncProperty(fc.constantFrom(...names), oddQueryValue, async (name, value) => {
        const res = await api('GET', `${url}?${name}=${value}`);
        assertEnvelope(res, `GET ${url}?${name}=${value.slice(0, 80)}`, undefined);
        if (res.statusCode === 400) assert.equal((res.json() as { error: { field?: string } }).error.field, name, `${url}?${name}=${value.slice(0, 80)}: ${res.body}`);
      }), { numRuns: NUM_RUNS, includeErrorInReport: true });
    }
  });

  it('offsets past what bigint holds, and non-finite ones, are 400 VALIDATION_FAILED naming offset', async () => {
    for (const offset of ['9223372036854775808', '99999999999999999999999', '1e400', 'Infinity']) {
      const res = await api('GET', `/api/v1/targets?offset=${offset}`);
      assert.equal(res.statusCode, 400, `${offset}: ${res.body}`);
      assert.deepEqual((res.json() as { error: unknown }).error, { code: 'VALIDATION_FAILED', message: (res.json() as { error: { message: string } }).error.message, field: 'offset' });
    }
    const far = await api('GET', '/api/v1/targets?offset=9007199254740991');
    assert.equal(far.statusCode, 200, far.body);
    assert.deepEqual((far.json() as { targets: unknown[] }).targets, []);
  });

  it('ids that are not lower-case uuids of a resource in the org get 404 on every route with an id, never a 5xx', async () => {
    const withId = apiRoutes().flatMap(([path, ops]) => (path.includes('{id}') ? Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })) : []));
    await fc.assert(fc.asyncProperty(fc.constantFrom(...withId), oddId, async ({ method, path }, id) => {
      const res = await api(method as 'GET', path.replaceAll('{id}', id), method === 'GET' || method === 'DELETE' ? undefined : {});
      assertEnvelope(res, `${method} ${path} ${id.slice(0, 60)}`, {});
    }), { numRuns: NUM_RUNS * 2, includeErrorInReport: true });
  });
});
