// Manual monitors (monitoring-api.md, "Manual monitor rules", "Manual state", "Manual monitor"
// transitions): the state routes, their codes, results written at once, audit, and set_by.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from '../targets/helpers.js';

describe('manual monitors: state', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let manualId: string;
  let httpId: string;
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    manualId = (await api('POST', '/api/v1/targets', { name: 'status board', check: { type: 'manual' } })).json().id;
    httpId = (await api('POST', '/api/v1/targets', httpTarget())).json().id;
  });
  after(async () => { await t.close(); });

  const results = async (id: string) => {
    return t.services.db.query<{ status: string; error: string | null }>('SELECT status, error FROM check_results WHERE target_id = $1 ORDER BY checked_at, id', [id]);
  };
  const audits = async (id: string) => t.services.db.query<{ action: string; actor_type: string; actor_id: string; details: Json }>(
    `SELECT action, actor_type, actor_id, details FROM audit_log WHERE entity_id = $1 AND action = 'target.state_set' ORDER BY id`, [id]);

  it('starts up, set at creation, by nobody', async () => {
    const target = (await api('GET', `/api/v1/targets/${manualId}`)).json() as Json;
    const res = await api('GET', `/api/v1/targets/${manualId}/state`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'up', note: null, set_at: target.created_at, set_by: null });
  });

  it('a set that changes status or note writes a result at once and an audit row with the user', async () => {
    const res = await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'down', note: 'database failover in progress' });
    assert.equal(res.statusCode, 200, res.body);
    const state = res.json() as Json;
    assert.equal(state.status, 'down');
    assert.equal(state.note, 'database failover in progress');
    assert.equal(state.set_by, tenant.userId);
    assert.deepEqual(await api('GET', `/api/v1/targets/${manualId}/state`).then((r) => r.json()), state);
    assert.deepEqual(await results(manualId), [{ status: 'down', error: 'database failover in progress' }]);
    const [audit] = await audits(manualId);
    assert.equal(audit!.details.status, 'down');
    const [token] = await t.services.db.query<{ id: string }>('SELECT id FROM api_tokens WHERE user_id = $1', [tenant.userId]);
    assert.deepEqual([audit!.actor_type, audit!.actor_id], ['token', token!.id], 'the actor is the token used');
    assert.equal(audit!.details.acting_user_id, tenant.userId, 'and the acting user is recorded with it');
    const noteOnly = await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'down', note: 'failover done, verifying' });
    assert.equal(noteOnly.json().note, 'failover done, verifying');
    assert.equal((await results(manualId)).length, 2, 'a new note alone is a change');
    assert.equal((await audits(manualId)).length, 2);
  });

  it('the same status and note again writes nothing and is not audited', async () => {
    const before = (await api('GET', `/api/v1/targets/${manualId}/state`)).json() as Json;
    const again = await api('PUT', `/api/v1/targets/${manualId}/state`, { status: before.status, note: `  ${before.note}  ` });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), before, 'set_at and set_by unchanged');
    assert.equal((await results(manualId)).length, 2);
    assert.equal((await audits(manualId)).length, 2);
  });

  it('a set restamps the target\'s write_source; a set that changes nothing leaves it (Conventions 8)', async () => {
    const id = (await api('POST', '/api/v1/targets', { name: 'iac board', check: { type: 'manual' } }, { 'x-keepwatch-client': 'iac' })).json().id as string;
    const writeSource = async () => (await api('GET', `/api/v1/targets/${id}`)).json().write_source as string;
    assert.equal(await writeSource(), 'iac');
    assert.equal((await api('PUT', `/api/v1/targets/${id}/state`, { status: 'degraded' })).statusCode, 200);
    assert.equal(await writeSource(), 'api', 'a set through the API restamps it');
    assert.equal((await api('PUT', `/api/v1/targets/${id}/state`, { status: 'degraded' }, { 'x-keepwatch-client': 'iac' })).statusCode, 200);
    assert.equal(await writeSource(), 'api', 'the same state again writes nothing');
    assert.equal((await api('PUT', `/api/v1/targets/${id}/state`, { status: 'up' }, { 'x-keepwatch-client': 'iac' })).statusCode, 200);
    assert.equal(await writeSource(), 'iac');
  });

  it('the note replaces the previous one; omitted or blank clears it', async () => {
    assert.equal((await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'degraded' })).json().note, null);
    assert.equal((await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'degraded', note: 'slow' })).json().note, 'slow');
    assert.equal((await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'degraded', note: '   ' })).json().note, null);
    const up = await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'up', note: null });
    assert.equal(up.json().status, 'up');
    assert.deepEqual((await results(manualId)).at(-1), { status: 'up', error: null });
  });

  it('a bad status or note is 400 INVALID_MANUAL_STATE naming it', async () => {
    const put = (body: unknown) => api('PUT', `/api/v1/targets/${manualId}/state`, body);
    expectError(await put({ status: 'broken' }), 400, 'INVALID_MANUAL_STATE', 'status');
    expectError(await put({ status: 3 }), 400, 'INVALID_MANUAL_STATE', 'status');
    expectError(await put({}), 400, 'INVALID_MANUAL_STATE', 'status');
    expectError(await put({ status: 'down', note: 'x'.repeat(201) }), 400, 'INVALID_MANUAL_STATE', 'note');
    for (const lineBreak of ['\n', '\r', '\u0085', '\u2028', '\u2029']) {
      expectError(await put({ status: 'down', note: `two${lineBreak}lines` }), 400, 'INVALID_MANUAL_STATE', 'note');
    }
    expectError(await put({ status: 'down', note: 7 }), 400, 'INVALID_MANUAL_STATE', 'note');
    expectError(await put({ status: 'down', set_by: 'me' }), 422, 'INVALID_JSON', 'set_by');
    assert.equal((await put({ status: 'down', note: 'é'.repeat(200) })).statusCode, 200, '200 characters is the limit, not bytes');
  });

  it('either state route on another kind is 404 MANUAL_NOT_CONFIGURED; foreign ids are plain 404', async () => {
    expectError(await api('GET', `/api/v1/targets/${httpId}/state`), 404, 'MANUAL_NOT_CONFIGURED');
    expectError(await api('PUT', `/api/v1/targets/${httpId}/state`, { status: 'down' }), 404, 'MANUAL_NOT_CONFIGURED');
    // Whatever the body: the kind answers before the body's schema would.
    for (const body of [{}, { status: 'bogus' }, { status: 'down', note: 'a\nb' }, { status: 'down', extra: 1 }]) {
      expectError(await api('PUT', `/api/v1/targets/${httpId}/state`, body), 404, 'MANUAL_NOT_CONFIGURED');
    }
    expectError(await api('PUT', `/api/v1/targets/${manualId}/state`, { status: 'bogus' }), 400, 'INVALID_MANUAL_STATE');
    const other = client(t, (await createTenantWithToken(t)).token);
    expectError(await other('GET', `/api/v1/targets/${manualId}/state`), 404, 'NOT_FOUND');
    expectError(await other('PUT', `/api/v1/targets/${manualId}/state`, { status: 'down' }), 404, 'NOT_FOUND');
  });

  it('reading needs targets:read, setting targets:write', async () => {
    const reader = client(t, await createToken(t, tenant.userId, { scopes: ['targets:read'], orgId: tenant.orgId }));
    assert.equal((await reader('GET', `/api/v1/targets/${manualId}/state`)).statusCode, 200);
    expectError(await reader('PUT', `/api/v1/targets/${manualId}/state`, { status: 'down' }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('set_by goes null once the setter is purged', async () => {
    const memberId = newId();
    await t.services.db.query(`INSERT INTO users (id, email, email_verified_at) VALUES ($1, $2, now())`, [memberId, `member-${memberId}@example.com`]);
    await t.services.db.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'Member')`, [tenant.orgId, memberId]);
    const member = client(t, await createToken(t, memberId, { orgId: tenant.orgId }));
    const set = await member('PUT', `/api/v1/targets/${manualId}/state`, { status: 'down', note: 'by a member who leaves' });
    assert.equal(set.json().set_by, memberId);
    assert.equal((await audits(manualId)).at(-1)!.details.acting_user_id, memberId, 'the audit names the member, not the token');
    await t.services.db.query('DELETE FROM users WHERE id = $1', [memberId]);
    const after = (await api('GET', `/api/v1/targets/${manualId}/state`)).json() as Json;
    assert.equal(after.set_by, null);
    assert.equal(after.note, 'by a member who leaves', 'the state itself stays');
  });
});
