// Maintenance windows at their edges (monitoring-api.md, "Maintenance and incident narration" and the
// REST conventions; CONTRACT.md wire shapes): timestamps with offsets and leap seconds, lengths,
// foreign components on edit, the scope table, write_source on every write, the update limit
// under concurrency, and the cache headers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from '../targets/helpers.js';

const BASE = '/api/v1/maintenance';
const HOUR = 3_600_000;

describe('maintenance windows at the edges', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let year: number;
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    year = t.clock.now().getUTCFullYear() + 2;
  });
  after(async () => { await t.close(); });

  const at = (offsetMs: number) => new Date(t.clock.now().getTime() + offsetMs).toISOString();
  const schedule = (extra: Json = {}, as: Api = api) => as('POST', BASE, { title: 'DB upgrade', starts_at: at(HOUR), ends_at: at(2 * HOUR), ...extra });

  it('timestamps with an offset are read as instants and answered in UTC with Z', async () => {
    const res = await schedule({ starts_at: `${year}-01-01T10:00:00+02:00`, ends_at: `${year}-01-01T12:00:00.5-05:30` });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json().starts_at, res.json().ends_at], [`${year}-01-01T08:00:00.000Z`, `${year}-01-01T17:30:00.500Z`]);
    expectError(await schedule({ starts_at: `${year}-01-01T10:00:00` }), 400, 'VALIDATION_FAILED', 'starts_at');
    // RFC 3339's offset is `+hh:mm`: JavaScript's Date would read both of these.
    expectError(await schedule({ starts_at: `${year}-01-01T10:00:00+0530` }), 400, 'VALIDATION_FAILED', 'starts_at');
    expectError(await schedule({ ends_at: `${year}-01-01T10:00:00-05` }), 400, 'VALIDATION_FAILED', 'ends_at');
  });

  it('a leap second or a year outside 0001-9999 is a 400 naming the field or a valid instant, never a 500', async () => {
    const leap = await schedule({ starts_at: `${year}-06-30T23:59:60Z`, ends_at: `${year}-07-01T01:00:00Z` });
    assert.equal(leap.statusCode, 201, leap.body);
    assert.equal(leap.json().starts_at, `${year}-07-01T00:00:00.000Z`, 'read as the next second, as PostgreSQL does');
    expectError(await schedule({ starts_at: '0000-01-01T00:00:00Z' }), 400, 'VALIDATION_FAILED', 'starts_at');
    expectError(await schedule({ ends_at: '9999-12-31T23:59:59-14:00' }), 400, 'VALIDATION_FAILED', 'ends_at');
    const w = (await schedule()).json() as Json;
    const patched = await api('PATCH', `${BASE}/${w.id}`, { ends_at: `${year}-12-31T23:59:60Z` });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().ends_at, `${year + 1}-01-01T00:00:00.000Z`);
    expectError(await api('PATCH', `${BASE}/${w.id}`, { starts_at: '0000-06-01T00:00:00Z' }), 400, 'VALIDATION_FAILED', 'starts_at');
  });

  it('a start in the years 0001-0099 is stored and answered as sent', async () => {
    for (const startsAt of ['0001-01-01T00:00:00.000Z', '0005-01-01T00:00:00.000Z', '0029-01-01T00:00:00.000Z', '0099-06-01T12:30:00.250Z']) {
      const res = await schedule({ starts_at: startsAt });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().starts_at, startsAt);
      assert.equal((await api('GET', `${BASE}/${res.json().id}`)).json().starts_at, startsAt);
    }
    const running = (await schedule({ starts_at: at(-HOUR) })).json() as Json;
    const patched = await api('PATCH', `${BASE}/${running.id}`, { starts_at: '0029-01-01T00:00:00Z' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().starts_at, '0029-01-01T00:00:00.000Z');
  });

  it('a start after the end, or a window wholly in the past, is refused on create and edit', async () => {
    expectError(await schedule({ starts_at: at(3 * HOUR), ends_at: at(2 * HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    expectError(await schedule({ starts_at: at(-3 * HOUR), ends_at: at(-2 * HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    const w = (await schedule()).json() as Json;
    expectError(await api('PATCH', `${BASE}/${w.id}`, { starts_at: at(3 * HOUR), ends_at: at(2 * HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    expectError(await api('PATCH', `${BASE}/${w.id}`, { ends_at: at(0) }), 400, 'VALIDATION_FAILED', 'ends_at');
    assert.equal((await api('GET', `${BASE}/${w.id}`)).json().ends_at, w.ends_at, 'nothing changed');
  });

  it('long title or description, and null for a field that cannot be cleared, name the field', async () => {
    expectError(await schedule({ title: 'x'.repeat(201) }), 400, 'VALIDATION_FAILED', 'title');
    expectError(await schedule({ description: 'x'.repeat(5001) }), 400, 'VALIDATION_FAILED', 'description');
    assert.equal((await schedule({ title: 'x'.repeat(200), description: 'y'.repeat(5000) })).statusCode, 201);
    const w = (await schedule({ description: 'kept' })).json() as Json;
    for (const field of ['title', 'starts_at', 'ends_at', 'components', 'suppress_alerts']) {
      expectError(await api('PATCH', `${BASE}/${w.id}`, { [field]: null }), 400, 'VALIDATION_FAILED', field);
    }
    expectError(await api('PATCH', `${BASE}/${w.id}`, { title: 'x'.repeat(201) }), 400, 'VALIDATION_FAILED', 'title');
    expectError(await api('PATCH', `${BASE}/${w.id}`, { write_source: 'ui' }), 422, 'INVALID_JSON', 'write_source');
    const cleared = await api('PATCH', `${BASE}/${w.id}`, { description: null });
    assert.equal(cleared.json().description, null, 'null clears the description');
  });

  it("another org's monitor as a component is refused on edit as on create, like an unknown id", async () => {
    const other = await createTenantWithToken(t, { plan: 'team' });
    const foreign = (await client(t, other.token)('POST', '/api/v1/targets', httpTarget())).json().id;
    const mine = (await api('POST', '/api/v1/targets', httpTarget())).json().id;
    const w = (await schedule({ components: [mine] })).json() as Json;
    const refused = expectError(await api('PATCH', `${BASE}/${w.id}`, { components: [mine, foreign] }), 400, 'VALIDATION_FAILED', 'components[1]');
    const unknown = expectError(await api('PATCH', `${BASE}/${w.id}`, { components: [mine, '0190a0a0-0000-7000-8000-000000000000'] }), 400, 'VALIDATION_FAILED', 'components[1]');
    assert.equal(refused.message, unknown.message, 'a foreign monitor reads as absent');
    assert.deepEqual((await api('GET', `${BASE}/${w.id}`)).json().components, [mine]);
  });

  it('scopes: read lists and gets; write creates, edits and posts updates; delete cancels on its own', async () => {
    const token = (scopes: string[]) => createToken(t, tenant.userId, { orgId: tenant.orgId, scopes });
    const reader = client(t, await token(['maintenance:read']));
    const writer = client(t, await token(['maintenance:write']));
    const deleter = client(t, await token(['maintenance:delete']));
    const w = (await schedule()).json() as Json;
    assert.equal((await reader('GET', `${BASE}/${w.id}`)).statusCode, 200);
    expectError(await reader('PATCH', `${BASE}/${w.id}`, { title: 'x' }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await reader('POST', `${BASE}/${w.id}/updates`, { message: 'x' }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await reader('DELETE', `${BASE}/${w.id}`), 403, 'INSUFFICIENT_SCOPE');
    assert.equal((await writer('GET', BASE)).statusCode, 200, 'write implies read');
    assert.equal((await writer('PATCH', `${BASE}/${w.id}`, { title: 'y' })).statusCode, 200);
    assert.equal((await writer('POST', `${BASE}/${w.id}/updates`, { message: 'y' })).statusCode, 201);
    expectError(await deleter('GET', BASE), 403, 'INSUFFICIENT_SCOPE');
    expectError(await deleter('PATCH', `${BASE}/${w.id}`, { title: 'z' }), 403, 'INSUFFICIENT_SCOPE');
    assert.equal((await deleter('DELETE', `${BASE}/${w.id}`)).statusCode, 204);
  });

  it('every write restamps write_source: edit, update, cancel', async () => {
    const iac = { 'x-keepwatch-client': 'iac' };
    const w = (await schedule()).json() as Json;
    assert.equal(w.write_source, 'api');
    assert.equal((await api('POST', `${BASE}/${w.id}/updates`, { message: 'soon' }, iac)).json().write_source, 'iac');
    assert.equal((await api('PATCH', `${BASE}/${w.id}`, { title: 'again' })).json().write_source, 'api');
    assert.equal((await api('DELETE', `${BASE}/${w.id}`, undefined, iac)).statusCode, 204);
    assert.equal((await api('GET', `${BASE}/${w.id}`)).json().write_source, 'iac');
  });

  it('a running window takes updates; concurrent updates stop at exactly 50', async () => {
    const w = (await schedule({ starts_at: at(-HOUR) })).json() as Json;
    assert.equal(w.status, 'active');
    const results = await Promise.all(Array.from({ length: 56 }, (_, i) => api('POST', `${BASE}/${w.id}/updates`, { message: `note ${i}` })));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 50);
    for (const r of results.filter((r) => r.statusCode !== 201)) expectError(r, 422, 'MAINTENANCE_UPDATE_LIMIT');
    assert.equal((await api('GET', `${BASE}/${w.id}`)).json().updates.length, 50);
  });

  it('201 with Location; mutations are no-store, reads private max-age=10', async () => {
    const created = await schedule();
    assert.equal(created.statusCode, 201);
    assert.equal(created.headers['cache-control'], 'no-store');
    assert.match(String(created.headers['content-type']), /^application\/json; charset=utf-8/);
    const id = created.json().id as string;
    assert.equal((await api('GET', created.headers.location as string)).json().id, id);
    for (const read of [BASE, `${BASE}/${id}`]) assert.equal((await api('GET', read)).headers['cache-control'], 'private, max-age=10');
    assert.equal((await api('PATCH', `${BASE}/${id}`, { title: 'x' })).headers['cache-control'], 'no-store');
    assert.equal((await api('DELETE', `${BASE}/${id}`)).headers['cache-control'], 'no-store');
  });
});
