import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { registerVariableUsage, snapshotVariables } from '../../src/variables/index.js';

type Json = Record<string, unknown>;

describe('variables API: rules', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    a = await createTenantWithToken(t);
  });
  after(async () => { await t.close(); });

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, token = a.token) =>
    t.inject({ method, url, headers: bearer(token), ...(payload !== undefined && { payload: payload as object }) });
  const create = async (body: Json): Promise<Json> => {
    const res = await call('POST', '/api/v1/variables', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };

  it('creates a variable: 201, Location, the Variable with used_by, no-store', async () => {
    const res = await call('POST', '/api/v1/variables', { key: 'base_host', value: 'api.example.com' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'id', 'is_secret', 'key', 'updated_at', 'used_by', 'value']);
    assert.equal(res.headers.location, `/api/v1/variables/${body.id}`);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    assert.equal(body.key, 'base_host');
    assert.equal(body.is_secret, false, 'is_secret defaults to false');
    assert.equal(body.value, 'api.example.com');
    assert.equal(body.used_by, 0);
    assert.match(body.created_at, /Z$/);

    const got = await call('GET', `/api/v1/variables/${body.id}`);
    assert.equal(got.statusCode, 200);
    assert.equal(got.headers['cache-control'], 'private, max-age=10');
    assert.deepEqual(got.json(), body);
  });

  it('never returns a secret value: not on create, get, list or rotate', async () => {
    const secret = 'tok-sEcReT-0001';
    const created = await create({ key: 'api_token', is_secret: true, value: secret });
    assert.equal(created.is_secret, true);
    assert.equal(created.value, null);
    const got = await call('GET', `/api/v1/variables/${created.id}`);
    assert.equal(got.json().value, null);
    const list = await call('GET', '/api/v1/variables?limit=1000');
    assert.equal(list.json().variables.find((v: Json) => v.id === created.id).value, null);
    const rotated = await call('PATCH', `/api/v1/variables/${created.id}`, { value: 'tok-sEcReT-0002' });
    assert.equal(rotated.statusCode, 200);
    assert.equal(rotated.json().value, null);
    assert.equal(rotated.json().is_secret, true);
    for (const res of [got, list, rotated]) assert.ok(!res.body.includes('sEcReT'));
  });

  it('a write-time snapshot lists every key with its kind and only the plain values', async () => {
    const other = await createTenantWithToken(t);
    const as = (token: string) => (body: Json) => call('POST', '/api/v1/variables', body, token);
    await as(other.token)({ key: 'snap_plain', value: 'https://93.184.216.34' });
    await as(other.token)({ key: 'snap_secret', is_secret: true, value: 'TOP-SECRET' });
    const snapshot = await snapshotVariables(t.services.db, other.orgId);
    assert.deepEqual(snapshot.kinds, [{ key: 'snap_plain', is_secret: false }, { key: 'snap_secret', is_secret: true }]);
    assert.deepEqual([...snapshot.plain], [['snap_plain', 'https://93.184.216.34']]);
  });

  it('refuses a key that does not match the pattern: 400 INVALID_VARIABLE_KEY on key', async () => {
    for (const key of ['Upper', '1abc', '_lead', '', 'has-dash', 'has space', 'a'.repeat(64), 'ünï']) {
      const res = await call('POST', '/api/v1/variables', { key, value: 'v' });
      assert.equal(res.statusCode, 400, key);
      assert.equal(res.json().error.code, 'INVALID_VARIABLE_KEY', key);
      assert.equal(res.json().error.field, 'key', key);
    }
    for (const body of [{ key: 5, value: 'v' }, { key: null, value: 'v' }, { value: 'v' }]) {
      const res = await call('POST', '/api/v1/variables', body);
      assert.deepEqual([res.statusCode, res.json().error.code, res.json().error.field], [400, 'INVALID_VARIABLE_KEY', 'key'], JSON.stringify(body));
    }
    assert.equal((await create({ key: `z${'a1_'.repeat(20)}ab`, value: 'v' })).key, `z${'a1_'.repeat(20)}ab`); // 63 chars
    assert.equal((await create({ key: 'q', value: 'v' })).key, 'q');
  });

  it('refuses a duplicate key in the org: 409 VARIABLE_KEY_EXISTS, whatever is_secret says', async () => {
    await create({ key: 'dup_key', value: 'one' });
    for (const body of [{ key: 'dup_key', value: 'two' }, { key: 'dup_key', is_secret: true, value: 'two' }]) {
      const res = await call('POST', '/api/v1/variables', body);
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'VARIABLE_KEY_EXISTS');
      assert.equal(res.json().error.field, 'key');
    }
  });

  it('lets another org use the same key', async () => {
    const b = await createTenantWithToken(t);
    await create({ key: 'shared_name', value: 'a' });
    const res = await call('POST', '/api/v1/variables', { key: 'shared_name', value: 'b' }, b.token);
    assert.equal(res.statusCode, 201);
  });

  it('caps value at 4096 characters and requires a string value', async () => {
    assert.equal((await create({ key: 'long_ok', value: 'x'.repeat(4096) })).value, 'x'.repeat(4096));
    const tooLong = await call('POST', '/api/v1/variables', { key: 'long_bad', value: 'x'.repeat(4097) });
    assert.equal(tooLong.statusCode, 400);
    assert.equal(tooLong.json().error.field, 'value');
    const missing = await call('POST', '/api/v1/variables', { key: 'no_value' });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.field, 'value');
    const number = await call('POST', '/api/v1/variables', { key: 'num_value', value: 5 });
    assert.equal(number.statusCode, 400);
    const v = await create({ key: 'to_rotate_long', value: 'x' });
    const rotTooLong = await call('PATCH', `/api/v1/variables/${v.id}`, { value: 'x'.repeat(4097) });
    assert.equal(rotTooLong.statusCode, 400);
    assert.equal(rotTooLong.json().error.field, 'value');
  });

  it('has strict bodies: an unknown key is 422 INVALID_JSON naming it', async () => {
    const res = await call('POST', '/api/v1/variables', { key: 'strict_one', value: 'v', description: 'x' });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().error.code, 'INVALID_JSON');
    assert.equal(res.json().error.field, 'description');
    assert.deepEqual(res.json().error.allowed.sort(), ['is_secret', 'key', 'value']);
    assert.equal((await call('GET', '/api/v1/variables?limit=1000')).json().variables.some((v: Json) => v.key === 'strict_one'), false);
  });

  it('rotates the value only: is_secret and key are fixed (422 INVALID_JSON)', async () => {
    const v = await create({ key: 'rotating', value: 'first' });
    for (const body of [{ value: 'x', is_secret: true }, { key: 'renamed', value: 'x' }, { value: 'x', id: v.id }]) {
      const res = await call('PATCH', `/api/v1/variables/${v.id}`, body);
      assert.equal(res.statusCode, 422, JSON.stringify(body));
      assert.equal(res.json().error.code, 'INVALID_JSON');
      assert.equal(res.json().error.field, Object.keys(body).find((k) => k !== 'value'));
      assert.deepEqual(res.json().error.allowed, ['value']);
    }
    assert.equal((await call('PATCH', `/api/v1/variables/${v.id}`, {})).json().error.field, 'value');
    // null is not a value: the rotation is refused, not a clear.
    const nulled = await call('PATCH', `/api/v1/variables/${v.id}`, { value: null });
    assert.equal(nulled.statusCode, 400);
    assert.equal(nulled.json().error.field, 'value');
    const res = await call('PATCH', `/api/v1/variables/${v.id}`, { value: 'second' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual({ key: body.key, is_secret: body.is_secret, value: body.value, created_at: body.created_at },
      { key: 'rotating', is_secret: false, value: 'second', created_at: v.created_at });
    assert.ok(body.updated_at >= (v.updated_at as string));
    assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).json().value, 'second');
  });

  it('deletes: 204, then 404 on get, rotate and delete', async () => {
    const v = await create({ key: 'doomed', value: 'x' });
    const res = await call('DELETE', `/api/v1/variables/${v.id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['cache-control'], 'no-store');
    for (const [method, body] of [['GET'], ['PATCH', { value: 'y' }], ['DELETE']] as const) {
      const again = await call(method, `/api/v1/variables/${v.id}`, body);
      assert.equal(again.statusCode, 404, method);
      assert.equal(again.json().error.code, 'NOT_FOUND');
    }
    assert.equal((await create({ key: 'doomed', value: 'reborn' })).value, 'reborn', 'the key is free again');
  });

  it('answers 404 for an id that is not a UUID', async () => {
    assert.equal((await call('GET', '/api/v1/variables/not-a-uuid')).statusCode, 404);
  });

  it('counts referencing monitors in used_by and blocks delete while referenced (409 VARIABLE_IN_USE)', async () => {
    const v = await create({ key: 'referenced', value: 'x' });
    const other = await create({ key: 'unreferenced', value: 'x' });
    const seen: Array<[string, string]> = [];
    const unregister = registerVariableUsage(async (_db, orgId, key) => {
      seen.push([orgId, key]);
      return orgId === a.orgId && key === 'referenced' ? 2 : 0;
    });
    try {
      assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).json().used_by, 2);
      assert.equal((await call('GET', `/api/v1/variables/${other.id}`)).json().used_by, 0);
      const listed = (await call('GET', '/api/v1/variables?limit=1000')).json().variables as Json[];
      assert.equal(listed.find((x) => x.id === v.id)!.used_by, 2);
      assert.equal((await call('PATCH', `/api/v1/variables/${v.id}`, { value: 'y' })).json().used_by, 2);
      const res = await call('DELETE', `/api/v1/variables/${v.id}`);
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'VARIABLE_IN_USE');
      assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).statusCode, 200, 'still there');
      assert.ok(seen.some(([org, key]) => org === a.orgId && key === 'referenced'));
      // A second domain's references add up.
      const unregister2 = registerVariableUsage(async (_db, _org, key) => (key === 'referenced' ? 1 : 0));
      assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).json().used_by, 3);
      unregister2();
    } finally {
      unregister();
    }
    assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).json().used_by, 0);
    assert.equal((await call('DELETE', `/api/v1/variables/${v.id}`)).statusCode, 204);
  });

  it('references are case-sensitive, and real monitors count in used_by until they drop the reference', async () => {
    const v = await create({ key: 'case_key', is_secret: true, value: 'CASE-SECRET' });
    const target = (headers: Json) => call('POST', '/api/v1/targets', { name: 'ref', check: { type: 'http', url: 'https://93.184.216.34/', headers } });
    const upper = await target({ Authorization: 'Bearer {{CASE_KEY}}' });
    assert.equal(upper.statusCode, 422, upper.body);
    assert.deepEqual(upper.json().error.code, 'UNRESOLVED_VARIABLE');
    assert.equal(upper.json().error.field, 'check.headers.Authorization');
    const ok = await target({ Authorization: 'Bearer {{ case_key }}' });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.ok(!ok.body.includes('CASE-SECRET'));
    assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).json().used_by, 1);
    assert.equal((await call('DELETE', `/api/v1/variables/${v.id}`)).json().error.code, 'VARIABLE_IN_USE');
    assert.equal((await call('PATCH', `/api/v1/variables/${v.id}`, { value: 'CASE-SECRET-2' })).json().used_by, 1, 'rotation keeps the references');
    assert.equal((await call('DELETE', `/api/v1/targets/${ok.json().id}`)).statusCode, 204);
    assert.equal((await call('GET', `/api/v1/variables/${v.id}`)).json().used_by, 0);
    assert.equal((await call('DELETE', `/api/v1/variables/${v.id}`)).statusCode, 204);
  });

  it('writes audit rows for create, rotate and delete, never with the value', async () => {
    const v = await create({ key: 'audited', is_secret: true, value: 'AUDIT-PLAINTEXT-1' });
    await call('PATCH', `/api/v1/variables/${v.id}`, { value: 'AUDIT-PLAINTEXT-2' });
    await call('DELETE', `/api/v1/variables/${v.id}`);
    const rows = await t.services.db.query<{ action: string; org_id: string; actor_type: string; entity_type: string; details: Json }>(
      'SELECT action, org_id, actor_type, entity_type, details FROM audit_log WHERE entity_id = $1 ORDER BY id', [v.id]);
    assert.deepEqual(rows.map((r) => r.action), ['variable.created', 'variable.rotated', 'variable.deleted']);
    for (const r of rows) {
      assert.equal(r.org_id, a.orgId);
      assert.equal(r.actor_type, 'token');
      assert.equal(r.entity_type, 'variable');
      assert.deepEqual(r.details, { key: 'audited', is_secret: true, acting_user_id: a.userId });
    }
    const all = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE details::text LIKE '%AUDIT-PLAINTEXT%'`);
    assert.equal(all[0]!.n, 0);
  });

  it('lists in key order with paging: {variables, total, limit, offset}', async () => {
    const c = await createTenantWithToken(t);
    const keys = ['delta', 'alpha', 'charlie', 'bravo', 'echo'];
    for (const key of keys) assert.equal((await call('POST', '/api/v1/variables', { key, value: key }, c.token)).statusCode, 201);
    const all = (await call('GET', '/api/v1/variables', undefined, c.token)).json();
    assert.deepEqual({ ...all, variables: all.variables.map((v: Json) => v.key) },
      { variables: [...keys].sort(), total: 5, limit: 50, offset: 0 });
    const page = (await call('GET', '/api/v1/variables?limit=2&offset=1', undefined, c.token)).json();
    assert.deepEqual({ ...page, variables: page.variables.map((v: Json) => v.key) },
      { variables: ['bravo', 'charlie'], total: 5, limit: 2, offset: 1 });
    const past = (await call('GET', '/api/v1/variables?offset=10', undefined, c.token)).json();
    assert.deepEqual(past, { variables: [], total: 5, limit: 50, offset: 10 });
    for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'limit=abc']) {
      const res = await call('GET', `/api/v1/variables?${q}`, undefined, c.token);
      assert.equal(res.statusCode, 400, q);
      assert.equal(res.json().error.code, 'VALIDATION_FAILED', q);
    }
    assert.equal((await call('GET', '/api/v1/variables?limit=1000', undefined, c.token)).json().limit, 1000);
  });
});
