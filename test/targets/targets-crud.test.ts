// Targets CRUD over HTTP: shapes, defaults, list filters, PATCH semantics, write_source, owners.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenant, createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, PUBLIC_URL, type Api, type Json } from './helpers.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('targets CRUD', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  let api: Api;
  before(async () => {
    t = await startTestApp();
    a = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, a.token);
  });
  after(async () => { await t.close(); });

  it('creates a target: 201, Location, the full target with defaults', async () => {
    const res = await api('POST', '/api/v1/targets', httpTarget());
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json() as Json;
    assert.match(body.id, UUID_V7);
    assert.equal(res.headers.location, `/api/v1/targets/${body.id}`);
    assert.deepEqual(body, {
      id: body.id, name: 'web',
      check: {
        type: 'http', url: PUBLIC_URL, method: 'GET', timeout: 10000, follow_redirects: true, max_redirects: 5, headers: {}, verify_tls: true, ip_version: 'any',
        expected_status: { kind: 'range', value: { min: 200, max: 399 } }, expected_body_contains: null, body: null, basic_auth: null, bearer_token: null,
      },
      interval: 60, enabled: true, tags: [], regions: ['local'], group_name: null, owner_user_id: a.userId, alerts: [],
      alert_confirmations: 2, notify_recovery: true, renotify_interval_secs: 3600, recovery_period_secs: 180, region_policy: 'majority',
      write_source: 'api', created_at: body.created_at, updated_at: body.updated_at,
    });
    assert.match(body.created_at, /Z$/);
    assert.deepEqual((await api('GET', `/api/v1/targets/${body.id}`)).json(), body);
  });

  it('stamps write_source iac for a declared infrastructure-as-code client, restamped by every write', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget(), { 'x-keepwatch-client': 'iac' })).json() as Json;
    assert.equal(created.write_source, 'iac');
    const patched = (await api('PATCH', `/api/v1/targets/${created.id}`, { name: 'renamed' })).json() as Json;
    assert.equal(patched.write_source, 'api');
    assert.equal(patched.name, 'renamed');
    const again = (await api('PATCH', `/api/v1/targets/${created.id}`, {}, { 'x-keepwatch-client': 'IaC' })).json() as Json;
    assert.equal(again.write_source, 'iac');
    assert.ok(again.updated_at >= patched.updated_at);
  });

  it('refuses read-only and unknown keys with 422 INVALID_JSON', async () => {
    for (const key of ['id', 'write_source', 'created_at', 'updated_at', 'bogus']) {
      expectError(await api('POST', '/api/v1/targets', httpTarget({ [key]: 'x' })), 422, 'INVALID_JSON', key);
    }
    const created = (await api('POST', '/api/v1/targets', httpTarget())).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { write_source: 'iac' }), 422, 'INVALID_JSON', 'write_source');
  });

  it('PATCH changes only the fields sent; null clears group_name and owner', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget({ group_name: 'prod', tags: ['a'] }))).json() as Json;
    const patched = (await api('PATCH', `/api/v1/targets/${created.id}`, { enabled: false, group_name: null, owner_user_id: null })).json() as Json;
    assert.equal(patched.enabled, false);
    assert.equal(patched.group_name, null);
    assert.equal(patched.owner_user_id, null);
    assert.deepEqual(patched.tags, ['a']);
    assert.deepEqual(patched.check, created.check);
    assert.equal(patched.interval, created.interval);
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { group_name: 'x'.repeat(51) }), 400, 'VALIDATION_FAILED', 'group_name');
  });

  it('group_name is stored trimmed, and one left blank by trimming is no group (null), on create and PATCH', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget({ group_name: '  prod  ' }))).json() as Json;
    assert.equal(created.group_name, 'prod');
    for (const blank of ['', '   ', '\t\u00a0']) {
      assert.equal(((await api('POST', '/api/v1/targets', httpTarget({ group_name: blank }))).json() as Json).group_name, null, JSON.stringify(blank));
      const patched = (await api('PATCH', `/api/v1/targets/${created.id}`, { group_name: blank })).json() as Json;
      assert.equal(patched.group_name, null, JSON.stringify(blank));
      assert.equal(((await api('PATCH', `/api/v1/targets/${created.id}`, { group_name: 'prod' })).json() as Json).group_name, 'prod');
    }
  });

  it('a name made only of whitespace is 400 naming name on create, PATCH and bulk, as on duplicate; names are stored trimmed', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget({ name: '  web  ' }))).json() as Json;
    assert.equal(created.name, 'web');
    for (const name of [' ', '\t \n', '\u00a0\u3000']) {
      expectError(await api('POST', '/api/v1/targets', httpTarget({ name })), 400, 'VALIDATION_FAILED', 'name');
      expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { name }), 400, 'VALIDATION_FAILED', 'name');
      expectError(await api('POST', '/api/v1/targets/bulk', { targets: [httpTarget(), httpTarget({ name })] }), 400, 'VALIDATION_FAILED', 'targets[1].name');
      expectError(await api('POST', `/api/v1/targets/${created.id}/duplicate`, { copies: [{ name }] }), 400, 'VALIDATION_FAILED', 'copies[0].name');
    }
    assert.equal(((await api('PATCH', `/api/v1/targets/${created.id}`, { name: ' renamed ' })).json() as Json).name, 'renamed');
  });

  it('owner must be a member of the org', async () => {
    const stranger = await createTenant(t);
    expectError(await api('POST', '/api/v1/targets', httpTarget({ owner_user_id: stranger.userId })), 400, 'VALIDATION_FAILED', 'owner_user_id');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ owner_user_id: `urn:uuid:${a.userId}` })), 400, 'VALIDATION_FAILED', 'owner_user_id');
    const unowned = (await api('POST', '/api/v1/targets', httpTarget({ owner_user_id: null }))).json() as Json;
    assert.equal(unowned.owner_user_id, null);
    expectError(await api('PATCH', `/api/v1/targets/${unowned.id}`, { owner_user_id: stranger.userId }), 400, 'VALIDATION_FAILED', 'owner_user_id');
    const owned = (await api('PATCH', `/api/v1/targets/${unowned.id}`, { owner_user_id: a.userId })).json() as Json;
    assert.equal(owned.owner_user_id, a.userId);
  });

  it('trims and de-duplicates tags before counting them', async () => {
    const tags = [...Array.from({ length: 50 }, (_, i) => ` t${i} `), 't0', 't1 '];
    const created = (await api('POST', '/api/v1/targets', httpTarget({ tags }))).json() as Json;
    assert.equal(created.tags.length, 50);
    assert.equal(created.tags[0], 't0');
    const tooMany = Array.from({ length: 51 }, (_, i) => `t${i}`);
    expectError(await api('POST', '/api/v1/targets', httpTarget({ tags: tooMany })), 400, 'VALIDATION_FAILED', 'tags');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ tags: ['ok', '   '] })), 400, 'VALIDATION_FAILED', 'tags[1]');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ tags: ['x'.repeat(51)] })), 400, 'VALIDATION_FAILED', 'tags[0]');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ tags: [` ${'x'.repeat(50)} `, 'a\u200Bb'] })), 400, 'VALIDATION_FAILED', 'tags[1]');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ tags: ['a\tb'] })), 400, 'VALIDATION_FAILED', 'tags[0]');
    // One tag however its accent is typed: stored in NFC, and found by either spelling.
    const accented = (await api('POST', '/api/v1/targets', httpTarget({ tags: ['caf\u00e9', 'cafe\u0301'] }))).json() as Json;
    assert.deepEqual(accented.tags, ['caf\u00e9']);
    const found = (await api('GET', `/api/v1/targets?tag=${encodeURIComponent('cafe\u0301')}`)).json() as Json;
    assert.deepEqual(found.targets.map((m: Json) => m.id), [accented.id]);
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { tags: ['fine', 'bad\u0007'] }), 400, 'VALIDATION_FAILED', 'tags[1]');
  });

  it('lists with limit, offset, tag (exact), enabled and q filters', async () => {
    const b = await createTenantWithToken(t, { plan: 'team' });
    const bApi = client(t, b.token);
    const names = ['Alpha shop', 'beta API', 'Gamma 100%_off'];
    const ids: string[] = [];
    for (const [i, name] of names.entries()) {
      const res = await bApi('POST', '/api/v1/targets', httpTarget({ name, tags: i === 0 ? ['prod', 'eu'] : ['Prod'], enabled: i !== 2 }));
      ids.push((res.json() as Json).id);
    }
    const all = (await bApi('GET', '/api/v1/targets')).json() as Json;
    assert.equal(all.total, 3);
    assert.deepEqual(all.targets.map((x: Json) => x.id), ids);
    assert.equal(all.limit, 50);
    assert.equal(all.offset, 0);
    const page = (await bApi('GET', '/api/v1/targets?limit=1&offset=1')).json() as Json;
    assert.deepEqual([page.total, page.limit, page.offset, page.targets[0].id], [3, 1, 1, ids[1]]);
    const byTag = (await bApi('GET', '/api/v1/targets?tag=prod')).json() as Json;
    assert.deepEqual(byTag.targets.map((x: Json) => x.id), [ids[0]]);
    // Tags are stored trimmed, so the filter is too; a blank one, like a blank `q`, filters nothing.
    const spaced = (await bApi('GET', '/api/v1/targets?tag=%20prod%20')).json() as Json;
    assert.deepEqual(spaced.targets.map((x: Json) => x.id), [ids[0]]);
    for (const blank of ['tag=', 'tag=%20', 'q=']) assert.equal(((await bApi('GET', `/api/v1/targets?${blank}`)).json() as Json).total, 3, blank);
    const paused = (await bApi('GET', '/api/v1/targets?enabled=false')).json() as Json;
    assert.deepEqual(paused.targets.map((x: Json) => x.id), [ids[2]]);
    const q = (await bApi('GET', '/api/v1/targets?q=API')).json() as Json;
    assert.deepEqual(q.targets.map((x: Json) => x.id), [ids[1]]);
    const literal = (await bApi('GET', `/api/v1/targets?q=${encodeURIComponent('%_')}`)).json() as Json;
    assert.deepEqual(literal.targets.map((x: Json) => x.id), [ids[2]]);
    expectError(await bApi('GET', '/api/v1/targets?limit=1001'), 400, 'VALIDATION_FAILED');
    const twice = expectError(await bApi('GET', '/api/v1/targets?limit=1&limit=2'), 400, 'VALIDATION_FAILED', 'limit');
    assert.equal(twice.message, 'query parameter limit is given more than once');
  });

  it('deletes: 204, then 404', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget())).json() as Json;
    const res = await api('DELETE', `/api/v1/targets/${created.id}`);
    assert.equal(res.statusCode, 204);
    expectError(await api('GET', `/api/v1/targets/${created.id}`), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `/api/v1/targets/${created.id}`), 404, 'NOT_FOUND');
  });

  it('writes an audit row per write', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget())).json() as Json;
    await api('PATCH', `/api/v1/targets/${created.id}`, { name: 'x' });
    await api('DELETE', `/api/v1/targets/${created.id}`);
    const rows = await t.services.db.query<{ action: string }>('SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY created_at, action', [created.id]);
    assert.deepEqual(rows.map((r) => r.action).sort(), ['target.created', 'target.deleted', 'target.updated']);
  });
});
