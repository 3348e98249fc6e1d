// Stored credentials: sealed at rest, `***` in every response, the sentinel refused on write-back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { sealerFor } from '../../src/shared/seal.js';
import { client, expectError, PUBLIC_URL, type Api, type Json } from './helpers.js';

const KEK = randomBytes(32);

describe('targets: credentials', () => {
  let t: TestApp;
  let api: Api;
  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': KEK.toString('base64') } });
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
  });
  after(async () => { await t.close(); });

  const storedSpec = async (id: string): Promise<Json> =>
    (await t.services.db.query<{ check_spec: Json }>('SELECT check_spec FROM targets WHERE id = $1', [id]))[0]!.check_spec;

  it('seals basic_auth and bearer_token at rest and redacts them in POST, GET, PATCH and list', async () => {
    const check = { type: 'http', url: PUBLIC_URL, basic_auth: ['admin', 'PW-secret-1'], bearer_token: 'TOKEN-secret-2' };
    const created = await api('POST', '/api/v1/targets', { name: 'c', check });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json() as Json;
    assert.deepEqual([body.check.basic_auth, body.check.bearer_token], [['***', '***'], '***']);
    const stored = await storedSpec(body.id);
    assert.match(stored.basic_auth, /^kw1:/);
    assert.match(stored.bearer_token, /^kw1:/);
    assert.deepEqual(JSON.parse(sealerFor(KEK).open(stored.basic_auth)!), ['admin', 'PW-secret-1']);
    assert.equal(sealerFor(KEK).open(stored.bearer_token), 'TOKEN-secret-2');
    const [dump] = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM targets WHERE check_spec::text LIKE '%secret-%'`);
    assert.equal(dump!.n, 0);
    for (const res of [await api('GET', `/api/v1/targets/${body.id}`), await api('PATCH', `/api/v1/targets/${body.id}`, { name: 'd' })]) {
      assert.deepEqual([res.json().check.basic_auth, res.json().check.bearer_token], [['***', '***'], '***']);
      assert.ok(!res.body.includes('secret-'));
    }
    assert.ok(!(await api('GET', '/api/v1/targets')).body.includes('secret-'));
  });

  it('keeps null credentials null', async () => {
    const body = (await api('POST', '/api/v1/targets', { name: 'n', check: { type: 'http', url: PUBLIC_URL, basic_auth: null, bearer_token: null } })).json() as Json;
    assert.deepEqual([body.check.basic_auth, body.check.bearer_token], [null, null]);
  });

  it('PATCH without check keeps the stored credentials', async () => {
    const body = (await api('POST', '/api/v1/targets', { name: 'k', check: { type: 'http', url: PUBLIC_URL, bearer_token: 'keep-me' } })).json() as Json;
    const before = await storedSpec(body.id);
    await api('PATCH', `/api/v1/targets/${body.id}`, { name: 'k2', tags: ['x'] });
    assert.equal((await storedSpec(body.id)).bearer_token, before.bearer_token);
    await api('PATCH', `/api/v1/targets/${body.id}`, { check: { type: 'http', url: PUBLIC_URL, bearer_token: 'rotated' } });
    assert.equal(sealerFor(KEK).open((await storedSpec(body.id)).bearer_token), 'rotated');
  });

  it('refuses the sentinel written back (REDACTION_SENTINEL)', async () => {
    const body = (await api('POST', '/api/v1/targets', { name: 's', check: { type: 'http', url: PUBLIC_URL, bearer_token: 'x', basic_auth: ['u', 'p'] } })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${body.id}`, { check: body.check }), 400, 'REDACTION_SENTINEL', 'check.basic_auth');
    expectError(await api('PATCH', `/api/v1/targets/${body.id}`, { check: { ...body.check, basic_auth: null } }), 400, 'REDACTION_SENTINEL', 'check.bearer_token');
    expectError(await api('POST', '/api/v1/targets', { name: 's', check: { type: 'http', url: PUBLIC_URL, basic_auth: ['u', '***'] } }), 400, 'REDACTION_SENTINEL', 'check.basic_auth');
  });

  it('refuses a credential that contains the sentinel, not only one that is it; the stored one is kept', async () => {
    const body = (await api('POST', '/api/v1/targets', { name: 'c', check: { type: 'http', url: PUBLIC_URL, bearer_token: 'kept' } })).json() as Json;
    const before = await storedSpec(body.id);
    const http = (extra: Json) => ({ check: { type: 'http', url: PUBLIC_URL, ...extra } });
    expectError(await api('PATCH', `/api/v1/targets/${body.id}`, http({ bearer_token: 'Bearer ***' })), 400, 'REDACTION_SENTINEL', 'check.bearer_token');
    expectError(await api('PATCH', `/api/v1/targets/${body.id}`, http({ basic_auth: ['***admin', 'pw'] })), 400, 'REDACTION_SENTINEL', 'check.basic_auth');
    expectError(await api('PATCH', `/api/v1/targets/${body.id}`, http({ basic_auth: ['admin', 'pw-****'] })), 400, 'REDACTION_SENTINEL', 'check.basic_auth');
    const fill = { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'fill', selector: '#pw', value: 'x***y' }, { op: 'assert_url', contains: '/' }] };
    expectError(await api('POST', '/api/v1/targets', { name: 'f', check: fill }), 400, 'REDACTION_SENTINEL', 'check.steps[0].value');
    assert.deepEqual(await storedSpec(body.id), before);
    assert.equal((await api('POST', '/api/v1/targets', { name: 'ok', check: { type: 'http', url: PUBLIC_URL, bearer_token: 'a**b*' } })).statusCode, 201, 'two stars are no sentinel');
  });

  it('seals flow fill values and redacts them', async () => {
    const steps = [{ op: 'fill', selector: '#pw', value: 'FILL-secret-3' }, { op: 'assert_text', contains: 'Welcome' }];
    const res = await api('POST', '/api/v1/targets', { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps } });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json() as Json;
    assert.equal(body.check.steps[0].value, '***');
    assert.equal(body.check.steps[1].contains, 'Welcome');
    const stored = await storedSpec(body.id);
    assert.equal(sealerFor(KEK).open(stored.steps[0].value), 'FILL-secret-3');
    expectError(await api('PATCH', `/api/v1/targets/${body.id}`, { check: body.check }), 400, 'REDACTION_SENTINEL', 'check.steps[0].value');
  });
});
