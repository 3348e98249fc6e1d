// Ping URL rotation and cadence advice (monitoring-api.md, "Heartbeat ping endpoint" rules 5 and 6).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateHeartbeats } from '../../src/heartbeat/index.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, type Api, type Json } from '../targets/helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('heartbeat monitors: rotation and cadence', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const heartbeat = async (check: Json = {}): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: HOUR, grace: 10 * MIN, ...check } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  };
  const record = async (id: string): Promise<Json> => (await api('GET', `/api/v1/targets/${id}/heartbeat`)).json();
  const pathOf = (rec: Json): string => new URL(rec.ping_url).pathname;
  const ping = (path: string) => t.inject({ method: 'GET', url: path });
  const rotate = (id: string, body?: unknown) => api('POST', `/api/v1/targets/${id}/heartbeat/rotate`, body);

  it('rotation mints a new URL; the old one keeps counting for 24 hours, then answers 404', async () => {
    const id = await heartbeat();
    const old = pathOf(await record(id));
    await ping(old);
    const res = await rotate(id, {});
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json();
    const fresh = pathOf(rotated);
    assert.notEqual(fresh, old);
    assert.equal(rotated.previous_url_last_used_at, null);
    assert.ok(rotated.rotated_at);
    assert.equal(Date.parse(rotated.previous_url_expires_at) - Date.parse(rotated.rotated_at), 24 * HOUR);
    assert.equal((await ping(fresh)).statusCode, 200);
    t.clock.advance(MIN);
    assert.equal((await ping(`${old}/fail`)).statusCode, 200, 'the replaced URL counts normally');
    const rec = await record(id);
    assert.equal(rec.previous_url_last_used_at, rec.last_fail_at);
    t.clock.advance(24 * HOUR);
    expectError(await ping(old), 404, 'NOT_FOUND');
    const after = await record(id);
    assert.ok(!('previous_url_expires_at' in after) && !('previous_url_last_used_at' in after), 'no overlap fields once it ended');
    assert.equal(after.rotated_at, rotated.rotated_at);
    const audit = await t.services.db.query(`SELECT 1 FROM audit_log WHERE entity_id = $1 AND action = 'target.heartbeat_rotated'`, [id]);
    assert.equal(audit.length, 1);
  });

  it('revoke_previous_immediately: the old URL is 404 from the same commit', async () => {
    const id = await heartbeat();
    const old = pathOf(await record(id));
    const res = await rotate(id, { revoke_previous_immediately: true });
    assert.equal(res.statusCode, 200);
    assert.ok(!('previous_url_expires_at' in res.json()));
    expectError(await ping(old), 404, 'NOT_FOUND');
    assert.equal((await ping(pathOf(res.json()))).statusCode, 200);
  });

  it('a second rotation within 24 hours keeps both replaced URLs working, each for its own 24 hours', async () => {
    const id = await heartbeat();
    const first = pathOf(await record(id));
    await rotate(id, {});
    const second = pathOf(await record(id));
    t.clock.advance(HOUR);
    const res = await rotate(id, {});
    assert.equal(res.statusCode, 200, res.body);
    const third = pathOf(res.json());
    assert.equal(Date.parse(res.json().previous_url_expires_at) - Date.parse(res.json().rotated_at), 24 * HOUR, 'the record shows the latest replaced URL');
    assert.equal((await ping(first)).statusCode, 200, 'the URL replaced first counts');
    assert.equal((await record(id)).previous_url_last_used_at, null, 'the record tells of the latest replaced URL only');
    const before = t.clock.now().getTime();
    assert.equal((await ping(second)).statusCode, 200);
    const used = Date.parse((await record(id)).previous_url_last_used_at);
    assert.ok(used >= before && used <= t.clock.now().getTime(), 'the latest replaced URL was used');
    assert.equal((await ping(third)).statusCode, 200);
    t.clock.advance(23 * HOUR);
    expectError(await ping(first), 404, 'NOT_FOUND');
    assert.equal((await ping(second)).statusCode, 200, 'replaced an hour later, it has an hour left');
    t.clock.advance(HOUR);
    expectError(await ping(second), 404, 'NOT_FOUND');
    assert.equal((await ping(third)).statusCode, 200);
  });

  it('revoke_previous_immediately and DELETE .../previous end every replaced URL', async () => {
    for (const end of ['rotate', 'delete'] as const) {
      const id = await heartbeat();
      const first = pathOf(await record(id));
      await rotate(id, {});
      const second = pathOf(await record(id));
      await rotate(id, {});
      if (end === 'rotate') assert.equal((await rotate(id, { revoke_previous_immediately: true })).statusCode, 200);
      else assert.equal((await api('DELETE', `/api/v1/targets/${id}/heartbeat/previous`)).statusCode, 204);
      for (const path of [first, second]) expectError(await ping(path), 404, 'NOT_FOUND');
      assert.equal((await ping(pathOf(await record(id)))).statusCode, 200);
    }
  });

  it('DELETE .../previous ends the overlap; it is 204 again with none', async () => {
    const id = await heartbeat();
    const old = pathOf(await record(id));
    await rotate(id, {});
    assert.equal((await api('DELETE', `/api/v1/targets/${id}/heartbeat/previous`)).statusCode, 204);
    expectError(await ping(old), 404, 'NOT_FOUND');
    assert.equal((await api('DELETE', `/api/v1/targets/${id}/heartbeat/previous`)).statusCode, 204);
  });

  it('rotation and ending an overlap restamp the target\'s write_source (Conventions 8)', async () => {
    const created = await api('POST', '/api/v1/targets', { name: 'iac cron', check: { type: 'heartbeat', period: HOUR } }, { 'x-keepwatch-client': 'iac' });
    const id = created.json().id as string;
    const writeSource = async () => (await api('GET', `/api/v1/targets/${id}`)).json().write_source as string;
    assert.equal(await writeSource(), 'iac');
    assert.equal((await rotate(id, {})).statusCode, 200);
    assert.equal(await writeSource(), 'api', 'a rotation through the API restamps it');
    const iac = { 'x-keepwatch-client': 'iac' };
    assert.equal((await api('DELETE', `/api/v1/targets/${id}/heartbeat/previous`, undefined, iac)).statusCode, 204);
    assert.equal(await writeSource(), 'iac', 'ending the overlap is a write too');
    assert.equal((await api('DELETE', `/api/v1/targets/${id}/heartbeat/previous`)).statusCode, 204);
    assert.equal(await writeSource(), 'iac', 'with no overlap it writes nothing');
  });

  it('DELETE .../previous after the 24 hours ran out writes nothing: no restamp, no audit', async () => {
    const id = await heartbeat();
    const old = pathOf(await record(id));
    assert.equal((await rotate(id, {})).statusCode, 200);
    assert.equal((await rotate(id, {})).statusCode, 200, 'a second rotation: one previous and one older replaced URL');
    t.clock.advance(24 * HOUR + MIN);
    expectError(await ping(old), 404, 'NOT_FOUND');
    const iac = { 'x-keepwatch-client': 'iac' };
    assert.equal((await api('DELETE', `/api/v1/targets/${id}/heartbeat/previous`, undefined, iac)).statusCode, 204);
    assert.equal((await api('GET', `/api/v1/targets/${id}`)).json().write_source, 'api', 'not restamped');
    const audit = await t.services.db.query(`SELECT 1 FROM audit_log WHERE entity_id = $1 AND action = 'target.heartbeat_previous_revoked'`, [id]);
    assert.equal(audit.length, 0);
  });

  it('rotation needs a JSON body and takes no other key', async () => {
    const id = await heartbeat();
    expectError(await rotate(id), 415, 'INVALID_CONTENT_TYPE');
    expectError(await rotate(id, { revoke: true }), 422, 'INVALID_JSON', 'revoke');
    expectError(await rotate(id, { revoke_previous_immediately: 'yes' }), 400, 'VALIDATION_FAILED', 'revoke_previous_immediately');
    const other = client(t, (await createTenantWithToken(t)).token);
    expectError(await other('POST', `/api/v1/targets/${id}/heartbeat/rotate`, {}), 404, 'NOT_FOUND');
    expectError(await other('DELETE', `/api/v1/targets/${id}/heartbeat/previous`), 404, 'NOT_FOUND');
  });

  it('rotation does not re-arm the silence clock nor touch incidents and history', async () => {
    const id = await heartbeat({ period: 10 * MIN, grace: 0 });
    const path = pathOf(await record(id));
    await ping(`${path}/fail`);
    const incidents = async () => (await api('GET', `/api/v1/incidents?status=open&target_id=${id}`)).json().incidents as Json[];
    const [open] = await incidents();
    await ping(path);
    t.clock.advance(9 * MIN);
    await rotate(id, {});
    t.clock.advance(2 * MIN);
    await evaluateHeartbeats(t.services);
    const statuses = await t.services.db.query<{ status: string }>('SELECT status FROM check_results WHERE target_id = $1 ORDER BY checked_at, id', [id]);
    assert.deepEqual(statuses.map((r) => r.status), ['down', 'up', 'down'], 'the window still counted from the last success');
    const [reopened] = await incidents();
    assert.ok(open && reopened);
    assert.equal((await api('GET', `/api/v1/incidents/${open!.id}`)).statusCode, 200, 'the first incident is still there');
  });

  it('observed period is the median gap between successes; advice from five successes', async () => {
    const id = await heartbeat({ period: HOUR, grace: 10 * MIN });
    const path = pathOf(await record(id));
    await ping(path);
    assert.equal((await record(id)).observed_period_secs, null, 'one success: no gap yet');
    for (let i = 0; i < 3; i++) {
      t.clock.advance(2 * HOUR);
      await ping(`${path}/start`);
      await ping(`${path}/0`);
    }
    let rec = await record(id);
    assert.equal(rec.observed_period_secs, 2 * 3600, '/start pings are not successes');
    assert.ok(!('cadence_advice' in rec), 'four successes: no advice yet');
    t.clock.advance(2 * HOUR);
    await ping(path);
    rec = await record(id);
    assert.deepEqual(rec.cadence_advice, { kind: 'too_tight', suggested_period_secs: 2 * 3600 });
    assert.equal(rec.declared_period_secs, 3600);
  });

  it('too_loose when period + grace is four times the real cadence or more; successes older than 14 days are left out', async () => {
    const id = await heartbeat({ period: 4 * HOUR, grace: MIN });
    const path = pathOf(await record(id));
    for (let i = 0; i < 5; i++) {
      await ping(path);
      t.clock.advance(HOUR);
    }
    assert.deepEqual((await record(id)).cadence_advice, { kind: 'too_loose', suggested_period_secs: 3600 });
    t.clock.advance(15 * 24 * HOUR);
    const rec = await record(id);
    assert.equal(rec.observed_period_secs, null);
    assert.ok(!('cadence_advice' in rec));
  });
});
