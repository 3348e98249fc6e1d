// Who may see a variable, and what the store holds: org isolation, scopes, sealing at rest.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { sealerFor } from '../../src/shared/seal.js';
import { resolveVariableValues } from '../../src/variables/index.js';

type Json = Record<string, unknown>;
interface StoredRow { value: string | null; sealed_value: string | null }

const KEK = randomBytes(32);

function client(t: TestApp, token: string) {
  return (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.inject({ method, url, headers: bearer(token), ...(payload !== undefined && { payload: payload as object }) });
}

const storedRow = async (t: TestApp, id: string): Promise<StoredRow> =>
  (await t.services.db.query<StoredRow>('SELECT value, sealed_value FROM variables WHERE id = $1', [id]))[0]!;

describe('variables: sealed at rest under a configured key', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': KEK.toString('base64') } });
    a = await createTenantWithToken(t);
  });
  after(async () => { await t.close(); });

  it('stores a secret only sealed under the key, and rotation reseals it', async () => {
    const api = client(t, a.token);
    const plaintext = `PLAINTEXT-${randomBytes(8).toString('hex')}`;
    const created = (await api('POST', '/api/v1/variables', { key: 'db_password', is_secret: true, value: plaintext })).json();
    const row = await storedRow(t, created.id);
    assert.equal(row.value, null);
    assert.match(row.sealed_value!, /^kw1:/);
    assert.equal(row.sealed_value!.split(':')[1], sealerFor(KEK).keyId);
    const [dump] = await t.services.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM variables WHERE org_id = $1 AND (coalesce(value, '') LIKE $2 OR sealed_value LIKE $2)`, [a.orgId, '%PLAINTEXT-%']);
    assert.equal(dump!.n, 0, 'no column holds the plaintext');
    assert.equal(sealerFor(KEK).open(row.sealed_value!), plaintext);

    const rotated = `ROTATED-${randomBytes(8).toString('hex')}`;
    assert.equal((await api('PATCH', `/api/v1/variables/${created.id}`, { value: rotated })).statusCode, 200);
    const after = await storedRow(t, created.id);
    assert.notEqual(after.sealed_value, row.sealed_value);
    assert.ok(!after.sealed_value!.includes('ROTATED'));
    assert.equal(sealerFor(KEK).open(after.sealed_value!), rotated);
  });

  it('stores a plain variable as plain text', async () => {
    const created = (await client(t, a.token)('POST', '/api/v1/variables', { key: 'region_name', value: 'eu' })).json();
    assert.deepEqual(await storedRow(t, created.id), { value: 'eu', sealed_value: null });
  });

  it('resolves values for probes, and reports a secret sealed under a key that is not configured', async () => {
    const b = await createTenantWithToken(t);
    const api = client(t, b.token);
    await api('POST', '/api/v1/variables', { key: 'host', value: 'example.com' });
    await api('POST', '/api/v1/variables', { key: 'token', is_secret: true, value: 's3cret' });
    const resolved = await resolveVariableValues(t.services.db, sealerFor(KEK), b.orgId);
    assert.deepEqual([...resolved.values], [['host', 'example.com'], ['token', 's3cret']]);
    assert.deepEqual([...resolved.secrets], ['token']);
    const otherKey = await resolveVariableValues(t.services.db, sealerFor(randomBytes(32)), b.orgId);
    assert.deepEqual([...otherKey.values], [['host', 'example.com']], 'the secret it cannot open has no value');
  });
});

describe('variables: without a configured key, secrets are sealed under the generated one', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'security.credentials_kek_base64': undefined } }); });
  after(async () => { await t.close(); });

  it('stores the secret sealed under data_dir\'s key, and still never returns it', async () => {
    const a = await createTenantWithToken(t);
    const res = await client(t, a.token)('POST', '/api/v1/variables', { key: 'pw', is_secret: true, value: 'open-sesame' });
    assert.equal(res.json().value, null);
    const row = await storedRow(t, res.json().id);
    assert.equal(row.value, null);
    assert.doesNotMatch(row.sealed_value!, /open-sesame/);
    const generated = sealerFor(Buffer.from(readFileSync(join(t.services.dataDir, 'credentials-kek'), 'utf8').trim(), 'base64'));
    assert.equal(row.sealed_value!.split(':')[1], generated.keyId);
    assert.equal(generated.open(row.sealed_value!), 'open-sesame');
  });
});

describe('variables: org isolation and scopes', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  let b: Tenant & { token: string };
  let variable: Json;
  before(async () => {
    t = await startTestApp();
    [a, b] = [await createTenantWithToken(t), await createTenantWithToken(t)];
    variable = (await client(t, a.token)('POST', '/api/v1/variables', { key: 'mine', value: 'a-value' })).json();
  });
  after(async () => { await t.close(); });

  it("answers 404 for another org's variable on GET, PATCH and DELETE, and leaves it alone", async () => {
    const other = client(t, b.token);
    for (const [method, body] of [['GET'], ['PATCH', { value: 'hijacked' }], ['DELETE']] as const) {
      const res = await other(method, `/api/v1/variables/${variable.id}`, body);
      assert.equal(res.statusCode, 404, method);
      assert.equal(res.json().error.code, 'NOT_FOUND', method);
    }
    const list = (await other('GET', '/api/v1/variables')).json();
    assert.deepEqual(list, { variables: [], total: 0, limit: 50, offset: 0 });
    const still = (await client(t, a.token)('GET', `/api/v1/variables/${variable.id}`)).json();
    assert.equal(still.value, 'a-value');
  });

  it("acts in the org the token names: an unbound token sees the org of X-Service-Org", async () => {
    const unbound = await createToken(t, a.userId, { scopes: ['variables:read'] });
    const res = await t.inject({ method: 'GET', url: '/api/v1/variables', headers: bearer(unbound, a.orgSlug) });
    assert.deepEqual(res.json().variables.map((v: Json) => v.id), [variable.id]);
    const foreign = await t.inject({ method: 'GET', url: '/api/v1/variables', headers: bearer(unbound, b.orgSlug) });
    assert.ok(foreign.statusCode >= 400 && foreign.statusCode < 500, 'not a member of that org');
    assert.ok(!foreign.body.includes(String(variable.id)));
  });

  it('needs variables:read to read, variables:write to create and rotate, variables:delete to delete', async () => {
    const tokenWith = (scopes: string[]) => createToken(t, a.userId, { scopes, orgId: a.orgId });
    const read = client(t, await tokenWith(['variables:read']));
    const write = client(t, await tokenWith(['variables:write']));
    const del = client(t, await tokenWith(['variables:delete']));
    const unrelated = client(t, await tokenWith(['targets:write']));
    const url = `/api/v1/variables/${variable.id}`;
    const denied = async (res: Promise<{ statusCode: number; json(): Json }>, what: string) => {
      const r = await res;
      assert.equal(r.statusCode, 403, what);
      assert.equal((r.json().error as Json).code, 'INSUFFICIENT_SCOPE', what);
    };
    await denied(read('POST', '/api/v1/variables', { key: 'nope', value: 'x' }), 'read token creating');
    await denied(read('PATCH', url, { value: 'x' }), 'read token rotating');
    await denied(read('DELETE', url), 'read token deleting');
    await denied(write('DELETE', url), 'write token deleting');
    await denied(del('GET', url), 'delete token reading');
    await denied(del('GET', '/api/v1/variables'), 'delete token listing');
    await denied(unrelated('GET', '/api/v1/variables'), 'targets token listing');
    await denied(unrelated('POST', '/api/v1/variables', { key: 'nope', value: 'x' }), 'targets token creating');

    assert.equal((await read('GET', url)).statusCode, 200);
    assert.equal((await read('GET', '/api/v1/variables')).statusCode, 200);
    assert.equal((await write('GET', url)).statusCode, 200, 'write implies read');
    assert.equal((await write('PATCH', url, { value: 'b-value' })).statusCode, 200);
    const created = await write('POST', '/api/v1/variables', { key: 'by_writer', value: 'x' });
    assert.equal(created.statusCode, 201);
    assert.equal((await del('DELETE', `/api/v1/variables/${created.json().id}`)).statusCode, 204);
    const names = (await read('GET', '/api/v1/variables')).json().variables.map((v: Json) => v.key);
    assert.deepEqual(names, ['mine']);
  });
});
