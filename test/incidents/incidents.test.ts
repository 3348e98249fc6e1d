// The incident engine over a real store and the incidents API over HTTP: confirmations, the
// recovery wait and relapses, acknowledge and resolve, manual monitors, maintenance suppression,
// tenancy and scopes, and one incident however many writers judge a monitor's results.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CheckResultRecord } from '../../src/results/types.js';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from '../targets/helpers.js';

const S = 1000;

describe('incidents', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const monitor = async (extra: Json = {}): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 2, recovery_period_secs: 60, ...extra }));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  // Results are dated from two hours ago onwards, each call after the last, `step` apart.
  let next = Date.now() - 2 * 3600 * S;
  const feed = async (targetId: string, statuses: CheckResultRecord['status'][], { step = 10 * S, region = 'local', writer = t } = {}): Promise<void> => {
    const start = next;
    next += statuses.length * step;
    statuses.forEach((status, i) => writer.services.results.push({
      targetId, orgId: tenant.orgId, region, status, duration_ms: 5, error: status === 'up' ? null : `HTTP 500 (${i})`,
      checkedAt: new Date(start + i * step), staleAfterMs: 30 * S,
    }));
    await writer.services.results.flush();
  };
  const incidentsOf = async (targetId: string): Promise<Json[]> => {
    const res = await api('GET', `/api/v1/incidents?target_id=${targetId}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().incidents;
  };
  /** The monitor's latest incident; fails the test when there is none. */
  const latest = async (targetId: string): Promise<Json> => {
    const [first] = await incidentsOf(targetId);
    assert.ok(first, 'an incident');
    return first;
  };
  const detail = async (id: string): Promise<Json> => (await api('GET', `/api/v1/incidents/${id}`)).json();

  it('opens after alert_confirmations failures and closes after the recovery period, dated to its start', async () => {
    const id = await monitor();
    await feed(id, ['up', 'down']);
    assert.deepEqual(await incidentsOf(id), [], 'one failure is not confirmed');
    await feed(id, ['down']);
    const open = await latest(id);
    assert.deepEqual([open.status, open.source, open.impact, open.target_id, open.cause, open.ended_at], ['open', 'monitor', 'major_outage', id, 'HTTP 500 (0)', null]);
    assert.equal(open.title, 'web is down');

    // Two passes start the recovery; it closes once it has lasted 60 s, dated to its first pass.
    await feed(id, ['up', 'up'], { step: 20 * S });
    const waiting = await latest(id);
    assert.equal(waiting.status, 'open');
    assert.ok(waiting.recovering_since);
    await feed(id, ['up', 'up', 'up'], { step: 30 * S });
    const closed = await latest(id);
    assert.equal(closed.status, 'resolved');
    assert.equal(closed.ended_at, waiting.recovering_since);
    assert.equal(closed.recovering_since, null);
    assert.equal(closed.resolved_by, null, 'closed by the engine, not a person');
    assert.deepEqual((await detail(closed.id)).timeline.map((e: Json) => e.kind), ['opened', 'recovering', 'closed']);
    const audit = await t.services.db.query<{ action: string; actor_type: string; actor_id: string }>(
      'SELECT action, actor_type, actor_id FROM audit_log WHERE entity_id = $1 ORDER BY created_at, action DESC', [closed.id]);
    assert.deepEqual(audit.map((a) => [a.action, a.actor_type, a.actor_id]), [['incident.opened', 'system', 'incident-engine'], ['incident.closed', 'system', 'incident-engine']]);
  });

  it('keeps one incident through a failure confirmed during the recovery wait', async () => {
    const id = await monitor({ recovery_period_secs: 600 });
    await feed(id, ['down', 'down', 'up', 'up', 'down', 'down', 'up', 'up']);
    const all = await incidentsOf(id);
    assert.equal(all.length, 1);
    assert.equal(all[0]!.recovered.length, 1);
    assert.ok(Date.parse(all[0]!.recovered[0].from) < Date.parse(all[0]!.recovered[0].until));
    assert.ok(all[0]!.recovering_since);
    assert.deepEqual((await detail(all[0]!.id)).timeline.map((e: Json) => e.kind), ['opened', 'recovering', 'relapsed', 'recovering']);
  });

  it('acknowledge and resolve: by whom, once, audited; a resolved monitor needs fresh confirmations', async () => {
    const id = await monitor();
    await feed(id, ['down', 'down']);
    const open = await latest(id);
    const acked = await api('POST', `/api/v1/incidents/${open.id}/acknowledge`);
    assert.equal(acked.statusCode, 200, acked.body);
    assert.equal(acked.json().acknowledged_by, tenant.userId);
    const again = (await api('POST', `/api/v1/incidents/${open.id}/acknowledge`)).json();
    assert.equal(again.acknowledged_at, acked.json().acknowledged_at, 'acknowledging twice changes nothing');

    const resolved = (await api('POST', `/api/v1/incidents/${open.id}/resolve`)).json();
    assert.deepEqual([resolved.status, resolved.resolved_by], ['resolved', tenant.userId]);
    assert.equal(resolved.ended_at, resolved.resolved_at);
    assert.equal((await api('POST', `/api/v1/incidents/${open.id}/resolve`)).json().resolved_at, resolved.resolved_at);
    expectError(await api('POST', `/api/v1/incidents/${open.id}/acknowledge`), 409, 'CONFLICT');
    const audit = await t.services.db.query<{ action: string }>('SELECT action FROM audit_log WHERE entity_id = $1 ORDER BY created_at', [open.id]);
    assert.deepEqual(audit.map((a) => a.action), ['incident.opened', 'incident.acknowledged', 'incident.resolved']);

    await feed(id, ['down']);
    assert.equal((await incidentsOf(id)).length, 1, 'still failing, but not confirmed again yet');
    await feed(id, ['down']);
    const after = await incidentsOf(id);
    assert.equal(after.length, 2);
    assert.equal(after.filter((i) => i.status === 'open').length, 1);
  });

  it('deleting a monitor ends its open incident, with no recovery notice; the history stays', async () => {
    for (const bulk of [false, true]) {
      const id = await monitor();
      await feed(id, ['down', 'down']);
      const open = await latest(id);
      const gone = bulk ? await api('POST', '/api/v1/targets/bulk-action', { action: 'delete', ids: [id] }) : await api('DELETE', `/api/v1/targets/${id}`);
      assert.ok(gone.statusCode === 204 || gone.statusCode === 200, gone.body);
      const ended = await detail(open.id);
      assert.deepEqual([ended.status, ended.target_id], ['resolved', null]);
      assert.ok(ended.ended_at, 'dated');
      assert.deepEqual(ended.timeline.map((e: Json) => e.kind), ['opened', 'closed']);
      const [queued] = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM notifications WHERE incident_id = $1 AND event = 'recovered'`, [open.id]);
      assert.equal(queued!.n, 0);
    }
  });

  it('audit rows of the engine, and of incidents ended by a delete, carry the monitor\'s account like the API\'s own', async () => {
    const id = await monitor();
    await feed(id, ['down', 'down']);
    const first = await latest(id);
    assert.equal((await api('POST', `/api/v1/incidents/${first.id}/acknowledge`, {})).statusCode, 200);
    await feed(id, ['up', 'up', 'up', 'up'], { step: 30 * S });
    assert.equal((await latest(id)).status, 'resolved');
    await feed(id, ['down', 'down']);
    const second = await latest(id);
    assert.equal((await api('DELETE', `/api/v1/targets/${id}`)).statusCode, 204);
    const rows = await t.services.db.query<{ action: string; actor_type: string; account_id: string | null }>(
      'SELECT action, actor_type, account_id FROM audit_log WHERE entity_id = ANY($1::text[]) ORDER BY created_at, id', [[first.id, second.id, id]]);
    assert.deepEqual(rows.map((r) => [r.action, r.actor_type]).sort(), [
      ['incident.acknowledged', 'token'], ['incident.closed', 'system'], ['incident.closed', 'token'], ['incident.opened', 'system'],
      ['incident.opened', 'system'], ['target.created', 'token'], ['target.deleted', 'token'],
    ]);
    for (const r of rows) assert.equal(r.account_id, tenant.accountId, `${r.action} by ${r.actor_type}`);
  });

  it('manual monitors: a state set opens at once, a worse one raises it with the note as cause, up closes it', async () => {
    const res = await api('POST', '/api/v1/targets', { name: 'billing', check: { type: 'manual' } });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    assert.equal((await api('PUT', `/api/v1/targets/${id}/state`, { status: 'degraded', note: 'slow invoices' })).statusCode, 200);
    const opened = await latest(id);
    assert.deepEqual([opened.status, opened.impact, opened.cause, opened.title], ['open', 'degraded', 'slow invoices', 'billing is degraded']);
    await api('PUT', `/api/v1/targets/${id}/state`, { status: 'down', note: 'invoices failing' });
    const raised = await latest(id);
    assert.equal(raised.id, opened.id, 'the same incident');
    assert.deepEqual([raised.impact, raised.cause, raised.title], ['major_outage', 'invoices failing', 'billing is down']);
    await api('PUT', `/api/v1/targets/${id}/state`, { status: 'up' });
    const closed = await latest(id);
    assert.equal(closed.status, 'resolved');
    assert.deepEqual((await detail(closed.id)).timeline.map((e: Json) => e.kind), ['opened', 'raised', 'recovering', 'closed']);

    // A title someone wrote stays when a worse state raises the incident.
    await api('PUT', `/api/v1/targets/${id}/state`, { status: 'degraded', note: 'slow again' });
    const reopened = await latest(id);
    const named = await api('PATCH', `/api/v1/incidents/${reopened.id}`, { title: 'Invoices are slow' });
    assert.equal(named.statusCode, 200, named.body);
    await api('PUT', `/api/v1/targets/${id}/state`, { status: 'down', note: 'failing again' });
    assert.deepEqual([(await latest(id)).impact, (await latest(id)).title], ['major_outage', 'Invoices are slow']);
  });

  it('lists a monitor\'s incident history as periods, newest first, ongoing_only keeping the open one', async () => {
    const id = await monitor({ recovery_period_secs: 0 });
    await feed(id, ['down', 'down', 'up', 'up', 'down', 'down']);
    const history = await api('GET', `/api/v1/targets/${id}/incidents`);
    assert.equal(history.statusCode, 200, history.body);
    const body = history.json();
    assert.equal(body.total, 2);
    assert.deepEqual(body.incidents.map((p: Json) => p.ongoing), [true, false]);
    assert.equal(body.incidents[0].ended_at, null);
    assert.ok(Date.parse(body.incidents[1].ended_at) <= Date.parse(body.incidents[0].started_at));
    assert.equal(body.incidents[1].incident_ids.length, 1);
    const ongoing = (await api('GET', `/api/v1/targets/${id}/incidents?ongoing_only=true`)).json();
    assert.deepEqual([ongoing.total, ongoing.incidents[0].impact], [1, 'major_outage']);
    const paged = (await api('GET', `/api/v1/targets/${id}/incidents?limit=1&offset=1`)).json();
    assert.deepEqual([paged.total, paged.incidents.length, paged.incidents[0].ongoing], [2, 1, false]);
    expectError(await api('GET', `/api/v1/targets/${id}/incidents?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`), 400, 'VALIDATION_FAILED', 'from');
    const other = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    expectError(await other('GET', `/api/v1/targets/${id}/incidents`), 404, 'NOT_FOUND');
  });

  it('declares an incident naming monitors; it shows in their history and lists', async () => {
    const id = await monitor();
    const res = await api('POST', '/api/v1/incidents', { title: ' Payments degraded ', severity: 'major', target_ids: [id] });
    assert.equal(res.statusCode, 201, res.body);
    const declared = res.json();
    assert.equal(res.headers.location, `/api/v1/incidents/${declared.id}`);
    assert.deepEqual([declared.source, declared.status, declared.title, declared.impact, declared.counts_as_downtime, declared.target_id, declared.target_ids],
      ['declared', 'open', 'Payments degraded', 'partial_outage', false, null, [id]]);
    assert.deepEqual(declared.timeline.map((e: Json) => [e.kind, e.actor_user_id]), [['declared', tenant.userId]]);
    assert.deepEqual((await incidentsOf(id)).map((i) => i.id), [declared.id]);
    const history = (await api('GET', `/api/v1/targets/${id}/incidents?ongoing_only=true`)).json();
    assert.deepEqual(history.incidents[0].incident_ids, [declared.id]);

    expectError(await api('POST', '/api/v1/incidents', { title: 'x', severity: 'major', target_ids: [id, id] }), 400, 'VALIDATION_FAILED', 'target_ids[1]');
    const foreign = await client(t, (await createTenantWithToken(t, { plan: 'team' })).token)('POST', '/api/v1/targets', httpTarget());
    expectError(await api('POST', '/api/v1/incidents', { title: 'x', severity: 'major', target_ids: [foreign.json().id] }), 400, 'VALIDATION_FAILED', 'target_ids[0]');
    expectError(await api('POST', '/api/v1/incidents', { title: '  ', severity: 'major' }), 400, 'VALIDATION_FAILED', 'title');
    expectError(await api('POST', '/api/v1/incidents', { title: 'x', severity: 'sev0' }), 400, 'VALIDATION_FAILED', 'severity');
    expectError(await api('POST', '/api/v1/incidents', { title: 'x', severity: 'minor', state: 'open' }), 422, 'INVALID_JSON', 'state');
  });

  it('narration: null clears, omitted stays, a declared title stays, downtime is a declared incident\'s call', async () => {
    const declared = (await api('POST', '/api/v1/incidents', { title: 'Login errors', severity: 'minor' })).json();
    const patched = await api('PATCH', `/api/v1/incidents/${declared.id}`, { public_title: 'Sign-in trouble', severity: 'critical', counts_as_downtime: true });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json().public_title, patched.json().severity, patched.json().impact, patched.json().counts_as_downtime, patched.json().title],
      ['Sign-in trouble', 'critical', 'major_outage', true, 'Login errors']);
    const cleared = (await api('PATCH', `/api/v1/incidents/${declared.id}`, { public_title: null })).json();
    assert.deepEqual([cleared.public_title, cleared.severity], [null, 'critical']);
    expectError(await api('PATCH', `/api/v1/incidents/${declared.id}`, { title: null }), 400, 'VALIDATION_FAILED', 'title');
    const reset = await api('PATCH', `/api/v1/incidents/${declared.id}`, { counts_as_downtime: null });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal(reset.json().counts_as_downtime, false, 'null clears it to its default');
    const unrated = (await api('PATCH', `/api/v1/incidents/${declared.id}`, { severity: null })).json();
    assert.deepEqual([unrated.severity, unrated.impact], [null, 'major_outage'], 'a cleared severity leaves the impact it last set');

    const id = await monitor();
    await feed(id, ['down', 'down']);
    const open = await latest(id);
    expectError(await api('PATCH', `/api/v1/incidents/${open.id}`, { counts_as_downtime: false }), 422, 'VALIDATION_FAILED', 'counts_as_downtime');
    expectError(await api('PATCH', `/api/v1/incidents/${open.id}`, { counts_as_downtime: null }), 422, 'VALIDATION_FAILED', 'counts_as_downtime');
    const untitled = (await api('PATCH', `/api/v1/incidents/${open.id}`, { title: null, public_description: 'We are on it' })).json();
    assert.deepEqual([untitled.title, untitled.public_description], [null, 'We are on it']);
    const audit = await t.services.db.query<{ action: string; details: Json }>("SELECT action, details FROM audit_log WHERE entity_id = $1 AND action = 'incident.narrated'", [open.id]);
    assert.deepEqual(audit.map((a) => a.details.changed), [['title', 'public_description']]);
  });

  it('updates: phases and length checked, oldest first; resolved resolves; narration is plan-gated, after the 404 of a foreign id', async () => {
    const declared = (await api('POST', '/api/v1/incidents', { title: 'CDN', severity: 'major' })).json();
    const first = await api('POST', `/api/v1/incidents/${declared.id}/updates`, { phase: 'investigating', message: 'Looking into it' });
    assert.equal(first.statusCode, 201, first.body);
    expectError(await api('POST', `/api/v1/incidents/${declared.id}/updates`, { phase: 'fixed', message: 'x' }), 400, 'VALIDATION_FAILED', 'phase');
    expectError(await api('POST', `/api/v1/incidents/${declared.id}/updates`, { phase: 'monitoring', message: 'x'.repeat(2001) }), 400, 'VALIDATION_FAILED', 'message');
    assert.equal((await api('POST', `/api/v1/incidents/${declared.id}/updates`, { phase: 'monitoring', message: 'x'.repeat(2000) })).statusCode, 201);
    const done = (await api('POST', `/api/v1/incidents/${declared.id}/updates`, { phase: 'resolved', message: 'Fixed' })).json();
    assert.deepEqual(done.updates.map((u: Json) => u.phase), ['investigating', 'monitoring', 'resolved']);
    assert.deepEqual([done.status, done.resolved_by], ['resolved', tenant.userId]);

    const hosted = await startTestApp({ store: t.store, config: { 'deployment.mode': 'hosted' } });
    try {
      const free = await createTenantWithToken(hosted, { plan: 'free' });
      const freeApi = client(hosted, free.token);
      const mine = (await freeApi('POST', '/api/v1/incidents', { title: 'x', severity: 'minor' })).json();
      expectError(await freeApi('PATCH', `/api/v1/incidents/${mine.id}`, { public_title: 'y' }), 403, 'INCIDENT_NARRATION_DISABLED');
      expectError(await freeApi('POST', `/api/v1/incidents/${mine.id}/updates`, { phase: 'identified', message: 'y' }), 403, 'INCIDENT_NARRATION_DISABLED');
      // An id that is not the org's is 404 before the plan is asked: the 403 would say it exists.
      for (const foreign of [declared.id, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
        expectError(await freeApi('PATCH', `/api/v1/incidents/${foreign}`, { public_title: 'y' }), 404, 'NOT_FOUND');
        expectError(await freeApi('POST', `/api/v1/incidents/${foreign}/updates`, { phase: 'identified', message: 'y' }), 404, 'NOT_FOUND');
      }
    } finally {
      await hosted.close();
    }
  });

  it('opens nothing under a maintenance window that suppresses alerts', async () => {
    const covered = await monitor();
    const bare = await monitor();
    const now = Date.now();
    const window = await api('POST', '/api/v1/maintenance', {
      title: 'db upgrade', starts_at: new Date(now - 3 * 3600 * S).toISOString(), ends_at: new Date(now + 3600 * S).toISOString(), components: [covered],
    });
    assert.equal(window.statusCode, 201, window.body);
    await feed(covered, ['down', 'down', 'down']);
    await feed(bare, ['down', 'down']);
    assert.deepEqual(await incidentsOf(covered), []);
    assert.equal((await incidentsOf(bare)).length, 1);
  });

  it('hides other orgs\' incidents and needs incidents:write to act', async () => {
    const id = await monitor();
    await feed(id, ['down', 'down']);
    const open = await latest(id);
    const other = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    expectError(await other('GET', `/api/v1/incidents/${open.id}`), 404, 'NOT_FOUND');
    expectError(await other('POST', `/api/v1/incidents/${open.id}/resolve`), 404, 'NOT_FOUND');
    assert.equal((await other('GET', '/api/v1/incidents')).json().total, 0);
    expectError(await api('GET', '/api/v1/incidents/not-an-id'), 404, 'NOT_FOUND');
    const reader = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['incidents:read'] }));
    assert.equal((await reader('GET', `/api/v1/incidents/${open.id}`)).statusCode, 200);
    expectError(await reader('POST', `/api/v1/incidents/${open.id}/acknowledge`), 403, 'INSUFFICIENT_SCOPE');
    const openOnly = (await api('GET', '/api/v1/incidents?status=open&limit=1')).json();
    assert.equal(openOnly.incidents.length, 1);
    assert.ok(openOnly.total >= 1);
  });

  it('opens one incident however many writers judge the same monitor at once', async () => {
    const second = await startTestApp({ store: t.store });
    try {
      assert.equal((await t.operator('POST', '/operator/regions', { id: 'other', name: 'Other' })).statusCode, 201);
      const id = await monitor({ alert_confirmations: 1, region_policy: 'any', regions: ['local', 'other'] });
      await Promise.all([feed(id, ['down', 'down']), feed(id, ['down', 'down'], { region: 'other', writer: second })]);
      const all = await incidentsOf(id);
      assert.equal(all.length, 1);
    } finally {
      await second.close();
    }
  });
});
