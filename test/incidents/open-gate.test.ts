// What keeps the rule's open from becoming an incident, or redates it: a manual monitor resolved by
// hand stays resolved while its state is restated unchanged, and an incident that opens after a
// suppressing maintenance window is dated no earlier than the window's end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { restateManualState } from '../../src/manual/index.js';
import type { CheckResultRecord } from '../../src/results/types.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, httpTarget, type Api, type Json } from '../targets/helpers.js';

const S = 1000;
const MIN = 60 * S;

describe('incident open gate', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const incidentsOf = async (id: string): Promise<Json[]> => (await api('GET', `/api/v1/incidents?target_id=${id}`)).json().incidents;
  const resolve = async (incidentId: string): Promise<void> => {
    assert.equal((await api('POST', `/api/v1/incidents/${incidentId}/resolve`)).statusCode, 200);
  };
  const push = async (targetId: string, status: CheckResultRecord['status'], at: number): Promise<void> => {
    t.services.results.push({ targetId, orgId: tenant.orgId, region: 'local', status, duration_ms: 5, error: status === 'up' ? null : 'HTTP 500', checkedAt: new Date(at), staleAfterMs: 30 * S });
    await t.services.results.flush();
  };

  describe('a manual monitor resolved by hand', () => {
    let id: string;
    /** Sets the state a minute on; when it was set. */
    const setState = async (status: string, note?: string): Promise<string> => {
      t.clock.advance(MIN);
      const res = await api('PUT', `/api/v1/targets/${id}/state`, { status, ...(note && { note }) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().set_at;
    };
    const restate = async (): Promise<void> => {
      t.clock.advance(MIN);
      assert.ok(await restateManualState(t.services.db, t.services.results, t.clock, { id, orgId: tenant.orgId }));
    };
    before(async () => {
      id = (await api('POST', '/api/v1/targets', { name: 'billing', check: { type: 'manual' } })).json().id;
    });

    it('stays resolved while the same state is restated, or set again with another note', async () => {
      await setState('down', 'broken');
      const [first] = await incidentsOf(id);
      await resolve(first!.id);
      await restate();
      await restate();
      await setState('down', 'still broken');
      assert.deepEqual((await incidentsOf(id)).map((i) => [i.id, i.status]), [[first!.id, 'resolved']], 'no new incident, nobody paged again');
    });

    it('opens a new incident when a state of another status is set, dated to it', async () => {
      const setAt = await setState('degraded', 'slow');
      const [worse, old] = await incidentsOf(id);
      assert.equal(old!.status, 'resolved');
      assert.deepEqual([worse!.status, worse!.impact, worse!.cause, worse!.started_at], ['open', 'degraded', 'slow', setAt]);
      await resolve(worse!.id);
      await restate();
      assert.equal((await incidentsOf(id)).length, 2);
    });

    it('opens again once it passes and fails again', async () => {
      await setState('up');
      await restate();
      assert.equal((await incidentsOf(id)).length, 2);
      await setState('down');
      const [again] = await incidentsOf(id);
      assert.deepEqual([(await incidentsOf(id)).length, again!.status], [3, 'open']);
    });
  });

  it('a probed monitor resolved by hand still reopens after fresh confirmations', async () => {
    const id = (await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 2, recovery_period_secs: 0 }))).json().id as string;
    const now = t.clock.now().getTime();
    await push(id, 'down', now + 1 * S);
    await push(id, 'down', now + 2 * S);
    t.clock.advance(3 * S);
    await resolve((await incidentsOf(id))[0]!.id);
    await push(id, 'down', now + 4 * S);
    assert.equal((await incidentsOf(id)).length, 1, 'one failure is not a fresh confirmation');
    await push(id, 'down', now + 5 * S);
    assert.deepEqual((await incidentsOf(id)).map((i) => i.status), ['open', 'resolved']);
  });

  for (const end of ['ended early', 'cancelled'] as const) {
    it(`an incident opening after a suppressing window (${end}) is dated no earlier than its end`, async () => {
      const id = (await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 2, recovery_period_secs: 0 }))).json().id as string;
      const now = t.clock.now().getTime();
      const window = (await api('POST', '/api/v1/maintenance', {
        title: 'db upgrade', starts_at: new Date(now - 120 * MIN).toISOString(), ends_at: new Date(now + 60 * MIN).toISOString(), components: [id],
      })).json();
      await push(id, 'down', now - 90 * MIN);
      await push(id, 'down', now - 89 * MIN);
      assert.deepEqual(await incidentsOf(id), [], 'suppressed');
      t.clock.advance(S);
      const ended = end === 'cancelled'
        ? await api('DELETE', `/api/v1/maintenance/${window.id}`)
        : await api('PATCH', `/api/v1/maintenance/${window.id}`, { ends_at: new Date(now).toISOString() });
      assert.ok(ended.statusCode < 300, ended.body);
      const endedAt = t.clock.now().getTime();
      await push(id, 'down', endedAt + 10 * S);
      const [open] = await incidentsOf(id);
      assert.equal(open?.status, 'open', 'still failing when the window ends: its next failure opens');
      assert.ok(Date.parse(open!.started_at) >= endedAt - S, `${open!.started_at} is not inside the window`);
      assert.ok(Date.parse(open!.started_at) <= endedAt + 10 * S);
      const [opened] = (await api('GET', `/api/v1/incidents/${open!.id}`)).json().timeline;
      assert.equal(opened.at, open!.started_at);
    });
  }
});
