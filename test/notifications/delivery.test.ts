// Notifications end to end: the incident engine queues them in its transaction, the worker
// delivers them to real local receivers (signed webhook, Slack, Discord and Teams shapes), retries
// with backoff (a receiver's Retry-After up to a cap) then dead-letters, sends reminders on the
// doubling cadence until acknowledged, one on recovery unless notify_recovery is false (to every
// channel the incident paged, bound still or not), a hanging receiver holds only its own send, and a
// send cut off by a dying node is delivered by another with the same idempotency key.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Deliverer, NotificationWorker } from '../../src/notifications/index.js';
import { signature } from '../../src/notifications/deliver.js';
import { CHANNEL_DELETED, CHANNEL_SILENT, RETRY_DELAY_CAP_MS } from '../../src/notifications/worker.js';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from '../targets/helpers.js';

const S = 1000;

describe('notification delivery', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let receiver: Server;
  let base: string;
  let deliverer: Deliverer;
  let worker: NotificationWorker;
  const received: { path: string; headers: Record<string, unknown>; raw: string; body: Json }[] = [];
  /** Answers held by the `/hang` receiver until a test lets them go. */
  const hanging: ServerResponse[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', () => {
        received.push({ path: req.url!, headers: req.headers, raw, body: JSON.parse(raw) });
        if (req.url === '/hang') { hanging.push(res); return; }
        if (req.url === '/retry-after') { res.writeHead(503, { 'retry-after': '99999999999999999' }); res.end(); return; }
        res.writeHead(req.url === '/fail' ? 500 : 204);
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startTestApp({ config: {
      'security.allow_private_targets': true, 'security.credentials_kek_base64': randomBytes(32).toString('base64'),
      'sms.provider_url': `${base}/sms-gateway`, 'sms.provider_token': 'gw-token',
    } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    deliverer = t.services.deliverer;
    worker = new NotificationWorker({ ...t.services, deliverer }, { baseDelayMs: 1, pollMs: 60_000 });
  });
  after(async () => {
    await t.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  const channel = async (name: string, config: Json, extra: Json = {}): Promise<string> => {
    const res = await api('POST', '/api/v1/notification-channels', { name, config, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  let next = Date.now() - 3600 * S;
  const feed = async (targetId: string, statuses: ('up' | 'down')[]): Promise<void> => {
    for (const status of statuses) {
      next += 10 * S;
      t.services.results.push({ targetId, orgId: tenant.orgId, region: 'local', status, duration_ms: 5, error: status === 'down' ? 'HTTP 500' : null, checkedAt: new Date(next), staleAfterMs: 30 * S });
    }
    await t.services.results.flush();
  };
  const openIncident = async (targetId: string): Promise<Json> =>
    (await api('GET', `/api/v1/incidents?target_id=${targetId}`)).json().incidents[0];
  const deliveries = async (incidentId: string): Promise<Json[]> => {
    const res = await api('GET', `/api/v1/incidents/${incidentId}/notifications`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().notifications;
  };
  const take = (): typeof received => received.splice(0);
  /** A monitor paging `channelId` at its first failure, without reminders; `extra` fields override. */
  const alerting = async (channelId: string, extra: Json = {}): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 1, renotify_interval_secs: 0, alerts: [{ channel_id: channelId }], ...extra }));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };

  it('pages every bound and auto-bound channel once on open, in each kind\'s shape, and on recovery', async () => {
    const hook = await channel('hook', { type: 'webhook', url: `${base}/hook`, secret: 'shh' });
    const slack = await channel('slack', { type: 'slack', webhook_url: `${base}/slack` });
    const discord = await channel('discord', { type: 'discord', webhook_url: `${base}/discord` });
    const teams = await channel('teams', { type: 'teams', webhook_url: `${base}/teams` });
    const email = await channel('mail', { type: 'email', to: 'ops@example.com' });
    await channel('db team', { type: 'webhook', url: `${base}/auto` }, { auto_bind_tags: ['DB'] });
    await channel('off', { type: 'webhook', url: `${base}/off` }, { enabled: false, auto_bind_tags: ['db'] });
    const res = await api('POST', '/api/v1/targets', httpTarget({
      name: 'api', tags: ['db'], alert_confirmations: 1, recovery_period_secs: 0, renotify_interval_secs: 0,
      alerts: [hook, slack, discord, teams, email].map((channel_id) => ({ channel_id })),
    }));
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    take();

    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    const got = take();
    assert.deepEqual(got.map((r) => r.path).sort(), ['/auto', '/discord', '/hook', '/slack', '/teams']);
    const webhook = got.find((r) => r.path === '/hook')!;
    assert.equal(webhook.headers['x-keepwatch-signature'], signature('shh', webhook.raw), 'HMAC-SHA256 of the exact body');
    assert.deepEqual([webhook.body.event, webhook.body.incident.id, webhook.body.monitor.name, webhook.headers['x-keepwatch-delivery']], ['opened', incident.id, 'api', webhook.body.id]);
    assert.equal(got.find((r) => r.path === '/auto')!.headers['x-keepwatch-signature'], undefined, 'no secret, no signature');
    assert.match(got.find((r) => r.path === '/slack')!.body.text, /^Incident opened: api is down/);
    assert.equal(got.find((r) => r.path === '/discord')!.body.embeds[0].title, 'Incident opened: api is down');
    assert.equal(got.find((r) => r.path === '/teams')!.body.attachments[0].contentType, 'application/vnd.microsoft.card.adaptive');
    const states = await deliveries(incident.id);
    assert.equal(states.length, 5, 'an unconfirmed email channel does not page');
    assert.ok(!states.some((n) => n.channel_id === email));
    assert.ok(states.every((n) => n.status === 'delivered' && n.attempts === 1 && n.next_attempt_at === null));

    await feed(id, ['up']);
    await worker.tick();
    assert.deepEqual(take().map((r) => [r.path, r.body.event ?? r.body.text?.split(':')[0]]).sort(), [
      ['/auto', 'recovered'], ['/discord', undefined], ['/hook', 'recovered'], ['/slack', 'Recovered'], ['/teams', undefined],
    ]);
  });

  it('speaks ntfy, Telegram and PagerDuty Events v2 at their configured endpoints', async () => {
    const ntfy = await channel('ntfy', { type: 'ntfy', server_url: `${base}/ntfy`, topic: 'ops-alerts', token: 'tk_secret' });
    const telegram = await channel('tg', { type: 'telegram', bot_token: `123456:${'A'.repeat(35)}`, chat_id: '-100200', api_base_url: `${base}/tg` });
    const pagerduty = await channel('pd', { type: 'pagerduty', routing_key: 'R'.repeat(32), events_url: `${base}/pd` });
    const id = (await api('POST', '/api/v1/targets', httpTarget({
      name: 'shop', alert_confirmations: 1, recovery_period_secs: 0, renotify_interval_secs: 0,
      alerts: [ntfy, telegram, pagerduty].map((channel_id) => ({ channel_id })),
    }))).json().id as string;
    take();
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    const got = take();
    const n = got.find((r) => r.path === '/ntfy')!;
    assert.deepEqual([n.body.topic, n.body.title, n.body.priority, n.headers.authorization], ['ops-alerts', 'Incident opened: shop is down', 5, 'Bearer tk_secret']);
    const tg = got.find((r) => r.path === `/tg/bot123456:${'A'.repeat(35)}/sendMessage`)!;
    assert.equal(tg.body.chat_id, '-100200');
    assert.match(tg.body.text, /^Incident opened: shop is down\nImpact: major outage/);
    const pd = got.find((r) => r.path === '/pd')!;
    assert.deepEqual([pd.body.routing_key, pd.body.event_action, pd.body.dedup_key, pd.body.payload.severity, pd.body.payload.source],
      ['R'.repeat(32), 'trigger', incident.id, 'critical', 'shop']);
    await feed(id, ['up']);
    await worker.tick();
    const resolved = take().find((r) => r.path === '/pd')!;
    assert.deepEqual([resolved.body.event_action, resolved.body.dedup_key], ['resolve', incident.id]);
  });

  it('test sends: an unsaved config or a saved channel gets a synthetic alert; the answer says whether it landed', async () => {
    const unsaved = await api('POST', '/api/v1/notification-channels/test', { config: { type: 'webhook', url: `${base}/try`, secret: 'k' } });
    assert.equal(unsaved.statusCode, 200, unsaved.body);
    assert.deepEqual(unsaved.json(), { delivered: true, error: null });
    const [sent] = take();
    assert.deepEqual([sent!.path, sent!.body.test, sent!.headers['x-keepwatch-signature']], ['/try', true, signature('k', sent!.raw)]);
    assert.deepEqual((await api('POST', '/api/v1/notification-channels/test', { config: { type: 'webhook', url: `${base}/fail` } })).json(), { delivered: false, error: 'HTTP 500' });
    take();
    expectError(await api('POST', '/api/v1/notification-channels/test', { config: { type: 'webhook', url: `${base}/x`, secret: '***' } }), 400, 'REDACTION_SENTINEL', 'config.secret');
    expectError(await api('POST', '/api/v1/notification-channels/test', { config: { type: 'carrier-pigeon' } }), 400, 'VALIDATION_FAILED');

    const saved = await channel('saved', { type: 'slack', webhook_url: `${base}/saved` });
    assert.deepEqual((await api('POST', `/api/v1/notification-channels/${saved}/test`)).json(), { delivered: true, error: null });
    assert.match(take()[0]!.body.text, /^\[Test\] Incident opened: Test alert from Keepwatch/);
    const other = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    expectError(await other('POST', `/api/v1/notification-channels/${saved}/test`), 404, 'NOT_FOUND');
    const writer = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['channels:write'] }));
    expectError(await writer('POST', `/api/v1/notification-channels/${saved}/test`), 403, 'INSUFFICIENT_SCOPE');
  });

  it('sends SMS through the deployment\'s gateway; without one the alert is dead at once with the reason', async () => {
    const sms = await channel('phone', { type: 'sms', to: '+447700900123' });
    const id = (await api('POST', '/api/v1/targets', httpTarget({ name: 'checkout', alert_confirmations: 1, recovery_period_secs: 0, notify_recovery: false, renotify_interval_secs: 0, alerts: [{ channel_id: sms }] }))).json().id as string;
    take();
    await feed(id, ['down']);
    await worker.tick();
    const [text] = take();
    assert.deepEqual([text!.path, text!.headers.authorization, text!.body.to, text!.body.body], ['/sms-gateway', 'Bearer gw-token', '+447700900123', 'Incident opened: checkout is down (HTTP 500)']);

    const bare = await startTestApp({ store: t.store });
    try {
      const lonely = new NotificationWorker(bare.services, { pollMs: 60_000 });
      await feed(id, ['up', 'down']);
      await lonely.tick();
      const incident = await openIncident(id);
      const [state] = await deliveries(incident.id);
      assert.deepEqual([state!.status, state!.attempts, state!.last_error], ['dead', 1, 'no SMS provider is configured (sms.provider_url)']);
    } finally {
      await bare.close();
    }
    take();
  });

  it('carries an acknowledge link where the channel asks for one; the link\'s page acts only on its button', async () => {
    const slack = await channel('ack-slack', { type: 'slack', webhook_url: `${base}/ack-slack` });
    const quiet = await channel('no-ack', { type: 'discord', webhook_url: `${base}/no-ack` }, { acknowledge_button: false });
    const hook = await channel('ack-hook', { type: 'webhook', url: `${base}/ack-hook` });
    const id = (await api('POST', '/api/v1/targets', httpTarget({ name: 'cart', alert_confirmations: 1, renotify_interval_secs: 0, alerts: [slack, quiet, hook].map((channel_id) => ({ channel_id })) }))).json().id as string;
    take();
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    const got = take();
    const button = got.find((r) => r.path === '/ack-slack')!.body.blocks.find((b: Json) => b.type === 'actions').elements[0];
    assert.equal(button.text.text, 'Acknowledge');
    assert.match(button.url, /^http:\/\/localhost:8080\/act\/[A-Za-z0-9_-]{43}$/);
    assert.doesNotMatch(got.find((r) => r.path === '/no-ack')!.body.embeds[0].description, /Acknowledge/);
    assert.equal(got.find((r) => r.path === '/ack-hook')!.body.actions, undefined);

    const path = new URL(button.url).pathname;
    const shown = await t.inject({ method: 'GET', url: path });
    assert.equal(shown.statusCode, 200);
    assert.match(String(shown.headers['content-type']), /^text\/html/);
    assert.match(shown.body, /<form method="post">/);
    assert.match(shown.body, /Incident: cart is down/);
    assert.equal((await openIncident(id)).acknowledged_at, null, 'looking at the page changes nothing');
    const acted = await t.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    assert.equal(acted.statusCode, 200, acted.body);
    assert.match(acted.body, /Acknowledged\. Reminders have stopped\./);
    const after = await openIncident(id);
    assert.ok(after.acknowledged_at);
    assert.equal(after.acknowledged_by, null, 'no user: the alert link acted');
    const [audit] = await t.services.db.query<{ actor_type: string; actor_id: string }>("SELECT actor_type, actor_id FROM audit_log WHERE entity_id = $1 AND action = 'incident.acknowledged'", [incident.id]);
    assert.deepEqual([audit!.actor_type, audit!.actor_id], ['system', 'alert-link:ack-slack']);
    assert.match((await t.inject({ method: 'POST', url: path })).body, /already acknowledged/);
    const gone = await t.inject({ method: 'GET', url: '/act/not-a-token' });
    assert.equal(gone.statusCode, 404);
    assert.match(gone.body, /unknown or has expired/);
  });

  it('an incident resolved by hand sends the recovery notice, unless notify_recovery is false', async () => {
    const hook = await channel('by hand', { type: 'webhook', url: `${base}/by-hand` });
    const loud = await alerting(hook);
    const quiet = await alerting(hook, { notify_recovery: false });
    await feed(loud, ['down']);
    await feed(quiet, ['down']);
    await worker.tick();
    take();
    for (const id of [loud, quiet]) assert.equal((await api('POST', `/api/v1/incidents/${(await openIncident(id)).id}/resolve`)).statusCode, 200);
    await worker.tick();
    const got = take();
    assert.deepEqual(got.map((r) => [r.body.event, r.body.monitor.id]), [['recovered', loud]]);
    assert.equal((await api('POST', `/api/v1/incidents/${(await openIncident(loud)).id}/resolve`)).statusCode, 200);
    await worker.tick();
    assert.deepEqual(take(), [], 'resolving again sends nothing');
  });

  it('is silent on recovery when notify_recovery is false', async () => {
    const hook = await channel('quiet', { type: 'webhook', url: `${base}/quiet` });
    const id = await alerting(hook, { recovery_period_secs: 0, notify_recovery: false });
    await feed(id, ['down', 'up']);
    await worker.tick();
    assert.deepEqual(take().map((r) => r.body.event), ['opened']);
  });

  it('sends a recovery only to the channels the incident paged: one off or unbound at the opening stays silent', async () => {
    const paged = await channel('paged', { type: 'webhook', url: `${base}/paged` });
    const late = await channel('late', { type: 'webhook', url: `${base}/late` }, { enabled: false });
    const bound = await channel('bound later', { type: 'webhook', url: `${base}/bound-later` });
    const id = (await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 1, recovery_period_secs: 0, renotify_interval_secs: 0, alerts: [{ channel_id: paged }, { channel_id: late }] }))).json().id as string;
    await feed(id, ['down']);
    await worker.tick();
    assert.deepEqual(take().map((r) => [r.path, r.body.event]), [['/paged', 'opened']]);
    assert.equal((await api('PATCH', `/api/v1/notification-channels/${late}`, { enabled: true })).statusCode, 200);
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { alerts: [paged, late, bound].map((channel_id) => ({ channel_id })) })).statusCode, 200);
    await feed(id, ['up']);
    await worker.tick();
    assert.deepEqual(take().map((r) => [r.path, r.body.event]), [['/paged', 'recovered']]);
  });

  it('a channel unbound from the monitor while the incident is open still hears its recovery', async () => {
    const paged = await channel('unbound later', { type: 'webhook', url: `${base}/unbound-later` });
    const id = await alerting(paged, { recovery_period_secs: 0 });
    await feed(id, ['down']);
    await worker.tick();
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { alerts: [] })).statusCode, 200);
    take();
    await feed(id, ['up']);
    await worker.tick();
    assert.deepEqual(take().map((r) => [r.path, r.body.event]), [['/unbound-later', 'recovered']], 'the alert it raised is closed');
  });

  it('a receiver\'s Retry-After lengthens the wait only up to the cap', async () => {
    const slow = await channel('retry after', { type: 'webhook', url: `${base}/retry-after` });
    const id = await alerting(slow);
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    const [first] = await deliveries(incident.id);
    assert.deepEqual([first!.status, first!.attempts, first!.last_error], ['pending', 1, 'HTTP 503']);
    const wait = Date.parse(first!.next_attempt_at) - t.clock.now().getTime();
    assert.ok(wait > RETRY_DELAY_CAP_MS - 5 * S && wait <= RETRY_DELAY_CAP_MS, `an hour, not the receiver's three million years (${wait} ms)`);
  });

  it('a hanging receiver holds only its own send: the next notification goes meanwhile', async () => {
    const stuck = await channel('hanging', { type: 'webhook', url: `${base}/hang` });
    const fine = await channel('fine', { type: 'webhook', url: `${base}/fine` });
    const live = new NotificationWorker({ ...t.services, deliverer }, { pollMs: 20 });
    const first = await alerting(stuck);
    const second = await alerting(fine);
    take();
    live.start();
    try {
      await feed(first, ['down']);
      while (!hanging.length) await new Promise((resolve) => setTimeout(resolve, 10));
      await feed(second, ['down']);
      const deadline = Date.now() + 5000;
      while (!received.some((r) => r.path === '/fine') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(received.some((r) => r.path === '/fine'), 'delivered while the other send hangs');
    } finally {
      for (const res of hanging.splice(0)) { res.writeHead(204); res.end(); }
      await live.stop();
    }
  });

  it('a notification pending when its channel is deleted is not sent: dead, saying so', async () => {
    const doomed = await channel('deleted later', { type: 'webhook', url: `${base}/fail` });
    const id = await alerting(doomed);
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    assert.equal((await api('DELETE', `/api/v1/notification-channels/${doomed}`)).statusCode, 204);
    take();
    t.clock.advance(60 * S);
    await worker.tick();
    const [last] = await deliveries(incident.id);
    assert.deepEqual([last!.status, last!.attempts, last!.last_error, last!.channel_id], ['dead', 1, CHANNEL_DELETED, null]);
    assert.equal(take().length, 0, 'nothing was sent');
  });

  it('retries a failing receiver with backoff, then dead-letters it', async () => {
    const failing = await channel('failing', { type: 'webhook', url: `${base}/fail` });
    const id = await alerting(failing);
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    const [first] = await deliveries(incident.id);
    assert.deepEqual([first!.status, first!.attempts, first!.last_error], ['pending', 1, 'HTTP 500']);
    for (let i = 0; i < 10; i++) {
      t.clock.advance(2 * S);
      await worker.tick();
    }
    const [last] = await deliveries(incident.id);
    assert.deepEqual([last!.status, last!.attempts], ['dead', 8]);
    assert.equal(take().filter((r) => r.path === '/fail').length, 8, 'each attempt reached the receiver');
  });

  it('delivers in order per incident and channel: a recovery waits for its opening page still retrying', async () => {
    const flaky = await channel('flaky', { type: 'webhook', url: `${base}/fail` });
    const id = await alerting(flaky, { recovery_period_secs: 0 });
    await feed(id, ['down']);
    await worker.tick();
    await feed(id, ['up']);
    take();
    t.clock.advance(2 * S);
    await worker.tick();
    assert.deepEqual(take().map((r) => [r.path, r.body.event]), [['/fail', 'opened']], 'the recovery is not tried while the opening retries');
    const [incident] = (await api('GET', `/api/v1/incidents?target_id=${id}`)).json().incidents as Array<{ id: string }>;
    const listed = (await api('GET', `/api/v1/incidents/${incident!.id}/notifications`)).json().notifications as Array<{ event: string; status: string; next_attempt_at: string }>;
    const [opened, recovered] = [listed.find((n) => n.event === 'opened')!, listed.find((n) => n.event === 'recovered')!];
    assert.deepEqual([opened.status, recovered.status], ['pending', 'pending']);
    assert.equal(recovered.next_attempt_at, opened.next_attempt_at, 'the recovery held behind it goes no sooner (it showed its own past time)');
    assert.equal((await api('PATCH', `/api/v1/notification-channels/${flaky}`, { config: { type: 'webhook', url: `${base}/in-order` } })).statusCode, 200);
    for (let i = 0; i < 3; i++) {
      t.clock.advance(5 * S);
      await worker.tick();
    }
    assert.deepEqual(take().map((r) => [r.path, r.body.event]), [['/in-order', 'opened'], ['/in-order', 'recovered']]);
  });

  it('a retry pending when its channel is disabled is not sent: it is dead with the reason', async () => {
    const failing = await channel('disabled later', { type: 'webhook', url: `${base}/fail` });
    const id = await alerting(failing);
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    assert.equal((await deliveries(incident.id))[0]!.status, 'pending');
    assert.equal((await api('PATCH', `/api/v1/notification-channels/${failing}`, { enabled: false })).statusCode, 200);
    take();
    t.clock.advance(60 * S);
    await worker.tick();
    const [last] = await deliveries(incident.id);
    assert.deepEqual([last!.status, last!.attempts, last!.last_error], ['dead', 1, CHANNEL_SILENT], 'the second claim was no attempt: nothing was sent');
    assert.equal(take().filter((r) => r.path === '/fail').length, 0, 'nothing reached the receiver');
  });

  it('reminds while unacknowledged, each gap doubling, and stops on acknowledge', async () => {
    const hook = await channel('remind', { type: 'webhook', url: `${base}/remind` });
    const id = (await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 1, renotify_interval_secs: 60, alerts: [{ channel_id: hook }] }))).json().id as string;
    await feed(id, ['down']);
    const incident = await openIncident(id);
    await worker.tick();
    const events = (): string[] => take().filter((r) => r.path === '/remind').map((r) => r.body.event);
    assert.deepEqual(events(), ['opened']);
    t.clock.advance(30 * S);
    await worker.tick();
    assert.deepEqual(events(), [], 'not before the interval');
    t.clock.advance(31 * S);
    await worker.tick();
    await worker.tick();
    assert.deepEqual(events(), ['reminder']);
    t.clock.advance(61 * S);
    await worker.tick();
    assert.deepEqual(events(), [], 'the second gap is twice the first');
    t.clock.advance(60 * S);
    await worker.tick();
    await worker.tick();
    assert.deepEqual(events(), ['reminder']);
    assert.equal((await api('POST', `/api/v1/incidents/${incident.id}/acknowledge`)).statusCode, 200);
    t.clock.advance(3600 * S);
    await worker.tick();
    assert.deepEqual(events(), []);
  });

  it('delivers a send cut off by a dying node once its lease ends, with the same idempotency key', async () => {
    const hook = await channel('lease', { type: 'webhook', url: `${base}/lease` });
    const id = await alerting(hook);
    await feed(id, ['down']);
    const incident = await openIncident(id);
    // A node that claims the notification and never finishes (it "died" mid-send).
    const stuck = new NotificationWorker({ ...t.services, deliverer: { send: () => new Promise<void>(() => {}) } as unknown as Deliverer }, { leaseMs: 30_000 });
    void stuck.tick();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [claimed] = await deliveries(incident.id);
    assert.deepEqual([claimed!.status, claimed!.attempts], ['pending', 1]);
    await worker.tick();
    assert.deepEqual(take().filter((r) => r.path === '/lease'), [], 'left alone while the lease runs');
    t.clock.advance(31 * S);
    await worker.tick();
    const got = take().filter((r) => r.path === '/lease');
    assert.equal(got.length, 1);
    assert.equal(got[0]!.body.id, claimed!.id, 'the same idempotency key');
    const [done] = await deliveries(incident.id);
    assert.deepEqual([done!.status, done!.attempts], ['delivered', 2]);
  });
});
