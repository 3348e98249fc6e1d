// A heartbeat's recovery wait: it writes a result only when its verdict changes, so nothing but the
// clock can end the wait; the heartbeat evaluation sweep closes it once `recovery_period_secs` has
// passed, dated to when the recovery began. Confirmations stay 1 whatever is stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateHeartbeats } from '../../src/heartbeat/index.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, type Api, type Json } from '../targets/helpers.js';

const S = 1000;

describe('heartbeat recovery wait', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const heartbeat = async (extra: Json): Promise<{ id: string; path: string }> => {
    const res = await api('POST', '/api/v1/targets', { name: 'backup', check: { type: 'heartbeat', period: 3600 * S, grace: 60 * S }, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    return { id, path: new URL((await api('GET', `/api/v1/targets/${id}/heartbeat`)).json().ping_url).pathname };
  };
  const ping = async (path: string): Promise<void> => {
    assert.equal((await t.inject({ method: 'GET', url: path })).statusCode, 200);
    t.clock.advance(S);
  };
  const incidentsOf = async (id: string): Promise<Json[]> => (await api('GET', `/api/v1/incidents?target_id=${id}`)).json().incidents;

  it('opens at the first failure, waits recovery_period_secs after the success, then closes dated to the success', async () => {
    const { id, path } = await heartbeat({ alert_confirmations: 3, recovery_period_secs: 600 });
    await ping(path);
    await ping(`${path}/fail`);
    const [open] = await incidentsOf(id);
    assert.equal(open?.status, 'open', 'one failure confirms a heartbeat, whatever alert_confirmations says');

    await ping(path);
    const [waiting] = await incidentsOf(id);
    assert.equal(waiting!.status, 'open', 'the success starts the wait, it does not close');
    assert.ok(waiting!.recovering_since);
    t.clock.advance(590 * S);
    await evaluateHeartbeats(t.services);
    assert.equal((await incidentsOf(id))[0]!.status, 'open', 'not before the period');

    t.clock.advance(15 * S);
    await evaluateHeartbeats(t.services);
    const [closed] = await incidentsOf(id);
    assert.deepEqual([closed!.id, closed!.status, closed!.ended_at, closed!.recovering_since, closed!.resolved_by],
      [open!.id, 'resolved', waiting!.recovering_since, null, null]);
    assert.deepEqual((await api('GET', `/api/v1/incidents/${closed!.id}`)).json().timeline.map((e: Json) => e.kind), ['opened', 'recovering', 'closed']);
    const [audit] = await t.services.db.query<{ actor_id: string; account_id: string | null }>(
      "SELECT actor_id, account_id FROM audit_log WHERE entity_id = $1 AND action = 'incident.closed'", [closed!.id]);
    assert.equal(audit?.actor_id, 'incident-engine');
    assert.equal(audit?.account_id, tenant.accountId, "in the monitor's account's log");
  });

  it('a failure inside the wait keeps the same incident; recovery_period_secs 0 closes at the success', async () => {
    const { id, path } = await heartbeat({ recovery_period_secs: 600 });
    await ping(path);
    await ping(`${path}/fail`);
    await ping(path);
    await ping(`${path}/fail`);
    const [relapsed] = await incidentsOf(id);
    assert.deepEqual([relapsed!.status, relapsed!.recovering_since, relapsed!.recovered.length], ['open', null, 1]);
    t.clock.advance(3600 * S);
    await evaluateHeartbeats(t.services);
    assert.equal((await incidentsOf(id))[0]!.status, 'open', 'failing, not recovering: the clock closes nothing');

    const quick = await heartbeat({ recovery_period_secs: 0 });
    await ping(quick.path);
    await ping(`${quick.path}/fail`);
    await ping(quick.path);
    assert.equal((await incidentsOf(quick.id))[0]!.status, 'resolved');
  });
});
