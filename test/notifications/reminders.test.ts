// When notifications do not go: a monitor under a maintenance window that suppresses alerts sends
// no reminder while the window runs (reminders resume after it), though a recovery still reaches
// the channels its incident paged before the window, so their alert closes; a paused
// or held monitor, or one whose reminders were turned off since, sends no reminder, and a
// reminder already queued or retrying when the incident is acknowledged or resolved is not sent.
// Per incident and channel, notifications go in order: one waits while an earlier one retries.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { enqueueNotifications, NotificationWorker, reminderGapMs, REMINDER_STOPPED } from '../../src/notifications/index.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, httpTarget, type Api, type Json } from '../targets/helpers.js';

const S = 1000;
const MIN = 60 * S;

describe('reminders and recovery notices that do not go', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let receiver: Server;
  let base: string;
  let worker: NotificationWorker;
  let failing = false;
  const received: { path: string; body: Json }[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', () => {
        received.push({ path: req.url!, body: JSON.parse(raw) });
        res.writeHead(failing ? 500 : 204);
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startTestApp({ config: { 'security.allow_private_targets': true } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    worker = new NotificationWorker(t.services, { baseDelayMs: 1, pollMs: 60_000 });
  });
  after(async () => {
    await t.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  // Each test starts with the test clock where it found it.
  let moved = 0;
  const advance = (ms: number): void => {
    moved += ms;
    t.clock.advance(ms);
  };
  afterEach(() => {
    t.clock.advance(-moved);
    moved = 0;
  });

  /** A monitor paging a webhook at `/{name}`, confirming at once, reminding every minute. */
  const monitor = async (name: string): Promise<string> => {
    const hook = await api('POST', '/api/v1/notification-channels', { name, config: { type: 'webhook', url: `${base}/${name}` } });
    assert.equal(hook.statusCode, 201, hook.body);
    const res = await api('POST', '/api/v1/targets', httpTarget({ name, alert_confirmations: 1, recovery_period_secs: 0, renotify_interval_secs: 60, alerts: [{ channel_id: hook.json().id }] }));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  /** Results dated from before any window these tests open. */
  let next = Date.now() - 3 * 3600 * S;
  const feed = async (targetId: string, status: 'up' | 'down'): Promise<void> => {
    next += 10 * S;
    t.services.results.push({ targetId, orgId: tenant.orgId, region: 'local', status, duration_ms: 5, error: status === 'down' ? 'HTTP 500' : null, checkedAt: new Date(next), staleAfterMs: 30 * S });
    await t.services.results.flush();
  };
  const incidentOf = async (targetId: string): Promise<Json> => (await api('GET', `/api/v1/incidents?target_id=${targetId}`)).json().incidents[0];
  const eventsAt = (name: string): string[] => received.splice(0).filter((r) => r.path === `/${name}`).map((r) => r.body.event);
  /** A suppressing window over `targetId`, running from a while ago (on the real and the test clock) for hours. */
  const window = async (targetId: string): Promise<string> => {
    const res = await api('POST', '/api/v1/maintenance', {
      title: 'upgrade', starts_at: new Date(Date.now() - 10 * MIN).toISOString(), ends_at: new Date(t.clock.now().getTime() + 3 * 3600 * S).toISOString(), components: [targetId],
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };

  it('the engine dates the first reminder and the opening page by the service clock, not the wall clock', async () => {
    advance(5 * 3600 * S);
    const id = await monitor('clocked');
    const from = t.clock.now().getTime();
    await feed(id, 'down');
    const to = t.clock.now().getTime();
    const within = (at: Date, offset: number): boolean => at.getTime() >= from + offset && at.getTime() <= to + offset;
    const [row] = await t.services.db.query<{ next_reminder_at: Date }>('SELECT next_reminder_at FROM incidents WHERE target_id = $1', [id]);
    assert.ok(within(row!.next_reminder_at, MIN), `first reminder at ${row!.next_reminder_at.toISOString()}`);
    const [page] = await t.services.db.query<{ created_at: Date }>(
      'SELECT n.created_at FROM notifications n JOIN incidents i ON i.id = n.incident_id WHERE i.target_id = $1', [id]);
    assert.ok(within(page!.created_at, 0), `page queued at ${page!.created_at.toISOString()}`);
  });

  it('no reminders while a suppressing window runs; they resume once it ends', async () => {
    const id = await monitor('paused');
    await feed(id, 'down');
    await worker.tick();
    assert.deepEqual(eventsAt('paused'), ['opened']);
    const windowId = await window(id);
    advance(2 * MIN);
    await worker.tick();
    advance(5 * MIN);
    await worker.tick();
    assert.deepEqual(eventsAt('paused'), [], 'the window holds the reminders');
    assert.equal((await incidentOf(id)).status, 'open');

    assert.equal((await api('PATCH', `/api/v1/maintenance/${windowId}`, { ends_at: t.clock.now().toISOString() })).statusCode, 200);
    advance(S);
    await worker.tick();
    await worker.tick();
    const [reminder, ...more] = received.splice(0).filter((r) => r.path === '/paused');
    assert.deepEqual([reminder?.body.event, reminder?.body.incident.reminders_sent, more.length], ['reminder', 1, 0], 'due since, the first reminder goes once the window ends');
  });

  it('no reminders for a paused or held monitor; they resume once it runs again', async () => {
    const id = await monitor('held');
    await feed(id, 'down');
    await worker.tick();
    assert.deepEqual(eventsAt('held'), ['opened']);
    await t.services.db.query('UPDATE targets SET held_at = now() WHERE id = $1', [id]);
    advance(2 * MIN);
    await worker.tick();
    assert.deepEqual(eventsAt('held'), [], 'held: not reminded');
    await t.services.db.query('UPDATE targets SET held_at = NULL WHERE id = $1', [id]);
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: false })).statusCode, 200);
    await worker.tick();
    assert.deepEqual(eventsAt('held'), [], 'paused: not reminded');
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: true })).statusCode, 200);
    await worker.tick();
    assert.deepEqual(eventsAt('held'), ['reminder']);
  });

  it('reminders turned off after the incident opened send none; turned back on, the one due goes', async () => {
    const id = await monitor('turned-off');
    await feed(id, 'down');
    await worker.tick();
    assert.deepEqual(eventsAt('turned-off'), ['opened']);
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { renotify_interval_secs: 0 })).statusCode, 200);
    advance(5 * MIN);
    await worker.tick();
    assert.deepEqual(eventsAt('turned-off'), [], 'off: the reminder scheduled at the opening does not go');
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { renotify_interval_secs: 60 })).statusCode, 200);
    await worker.tick();
    assert.deepEqual(eventsAt('turned-off'), ['reminder']);
  });

  it('a changed interval applies from the change: lowered, the next reminder comes sooner; turned on for an incident opened without, one is scheduled', async () => {
    for (const [name, atOpening] of [['lowered', 3600], ['turned-on', 0]] as const) {
      const id = await monitor(name);
      assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { renotify_interval_secs: atOpening })).statusCode, 200);
      await feed(id, 'down');
      await worker.tick();
      assert.deepEqual(eventsAt(name), ['opened']);
      advance(10 * MIN);
      await worker.tick();
      assert.deepEqual(eventsAt(name), [], `${name}: nothing due yet`);
      assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { renotify_interval_secs: 60 })).statusCode, 200);
      advance(30 * S);
      await worker.tick();
      assert.deepEqual(eventsAt(name), [], `${name}: the new interval counts from the change`);
      advance(31 * S);
      await worker.tick();
      assert.deepEqual(eventsAt(name), ['reminder'], name);
      t.clock.advance(-moved);
      moved = 0;
    }
  });

  it('a recovery during a suppressing window still reaches the channels paged before it, whether the monitor recovers or a person resolves it', async () => {
    const recovers = await monitor('recovers');
    const byHand = await monitor('by-hand');
    await feed(recovers, 'down');
    await feed(byHand, 'down');
    await worker.tick();
    assert.deepEqual(received.splice(0).map((r) => r.body.event), ['opened', 'opened']);
    await window(recovers);
    await window(byHand);
    await feed(recovers, 'up');
    assert.equal((await incidentOf(recovers)).status, 'resolved');
    assert.equal((await api('POST', `/api/v1/incidents/${(await incidentOf(byHand)).id}/resolve`)).statusCode, 200);
    await worker.tick();
    assert.deepEqual(received.splice(0).map((r) => r.body.event), ['recovered', 'recovered']);
    for (const id of [recovers, byHand]) {
      const states = (await api('GET', `/api/v1/incidents/${(await incidentOf(id)).id}/notifications`)).json().notifications as Json[];
      assert.deepEqual(states.map((n) => [n.event, n.status]), [['opened', 'delivered'], ['recovered', 'delivered']]);
    }
  });

  it('a reminder retrying when the incident is acknowledged is not sent; the delivery state says why', async () => {
    const id = await monitor('retrying');
    failing = true;
    try {
      await feed(id, 'down');
      await worker.tick();
      advance(61 * S);
      await worker.tick();
      // In order per channel: the reminder waits while the opening page retries.
      assert.deepEqual(eventsAt('retrying'), ['opened', 'opened'], 'the opening tried twice, the reminder not yet');
      const incident = await incidentOf(id);
      assert.equal((await api('POST', `/api/v1/incidents/${incident.id}/acknowledge`)).statusCode, 200);
    } finally {
      failing = false;
    }
    advance(MIN);
    await worker.tick();
    await worker.tick();
    assert.deepEqual(eventsAt('retrying'), ['opened'], 'the alert still lands; the reminder does not');
    const states = (await api('GET', `/api/v1/incidents/${(await incidentOf(id)).id}/notifications`)).json().notifications as Json[];
    const reminder = states.find((n) => n.event === 'reminder')!;
    assert.deepEqual([reminder.status, reminder.attempts, reminder.last_error, reminder.next_attempt_at], ['dead', 0, REMINDER_STOPPED, null]);
  });

  it('a reminder queued when the incident is resolved is not sent; the recovery notice is', async () => {
    const id = await monitor('queued');
    await feed(id, 'down');
    await worker.tick();
    assert.deepEqual(eventsAt('queued'), ['opened']);
    const incident = await incidentOf(id);
    await t.services.db.transaction((tx) => enqueueNotifications(tx, [{ orgId: tenant.orgId, incidentId: incident.id, targetId: id, event: 'reminder' }], t.clock.now()));
    assert.equal((await api('POST', `/api/v1/incidents/${incident.id}/resolve`)).statusCode, 200);
    await worker.tick();
    await worker.tick();
    assert.deepEqual(eventsAt('queued'), ['recovered']);
    const states = (await api('GET', `/api/v1/incidents/${incident.id}/notifications`)).json().notifications as Json[];
    assert.deepEqual(states.map((n) => [n.event, n.status, n.attempts]), [['opened', 'delivered', 1], ['reminder', 'dead', 0], ['recovered', 'delivered', 1]]);
  });
});

describe('reminderGapMs', () => {
  it('doubles each gap from the interval up to a day; an interval of a day or more keeps its own cadence', () => {
    const MIN = 60_000;
    const DAY = 86_400_000;
    assert.deepEqual([0, 1, 2, 3].map((sent) => reminderGapMs(600, sent)), [10 * MIN, 20 * MIN, 40 * MIN, 80 * MIN]);
    assert.equal(reminderGapMs(3600, 5), DAY, '32 hours is capped at a day');
    assert.equal(reminderGapMs(3600, 40), DAY, 'no overflow however many were sent');
    assert.deepEqual([0, 1, 5].map((sent) => reminderGapMs(2 * 86_400, sent)), [2 * DAY, 2 * DAY, 2 * DAY]);
  });
});
