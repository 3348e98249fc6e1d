// Email channels against a real SMTP server on 127.0.0.1 (smtp-server): the verification link is
// mailed on create, an unconfirmed channel does not page, following the link shows a page and only
// its button's POST confirms (a mail scanner's GET changes nothing), alerts then arrive as text and
// HTML; a new address is confirmed again; resend is limited and refused for channels with nothing to
// confirm; used, unknown and expired links are 404 pages.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { NotificationWorker } from '../../src/notifications/index.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { startSmtpInbox, type Received, type SmtpInbox } from '../helpers/smtp.js';
import { client, expectError, httpTarget, type Api } from '../targets/helpers.js';

describe('email channels', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let smtp: SmtpInbox;
  let inbox: Received[];
  let worker: NotificationWorker;

  before(async () => {
    smtp = await startSmtpInbox();
    inbox = smtp.messages;
    t = await startTestApp({ config: { 'mail.smtp_url': smtp.url, 'auth.public_base_url': 'https://keepwatch.example' } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    worker = new NotificationWorker(t.services, { pollMs: 60_000 });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const mailTo = async (address: string): Promise<Received> => {
    for (let i = 0; i < 100; i++) {
      const at = inbox.findIndex((m) => m.to === address);
      if (at >= 0) return inbox.splice(at, 1)[0]!;
      await sleep(50);
    }
    throw new Error(`no mail to ${address}`);
  };
  /** The path of the verification link in a mail (quoted-printable soft breaks undone). */
  const linkIn = (mail: Received): string => `/verify/channel/${tokenIn(mail)}`;
  const verifiedOf = async (id: string): Promise<boolean> => (await api('GET', `/api/v1/notification-channels/${id}`)).json().verified;
  /** The button's POST: an HTML form sends an empty urlencoded body. */
  const submitForm = (path: string) => t.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
  const expectGonePage = (res: Awaited<ReturnType<typeof t.inject>>, what: string) => {
    assert.equal(res.statusCode, 404, `${what}: ${res.body}`);
    assert.match(String(res.headers['content-type']), /^text\/html/, what);
    assert.match(res.body, /unknown, already used or expired/, what);
  };
  /** The verification token in a mail (quoted-printable soft breaks undone). */
  const tokenIn = (mail: Received): string => {
    const body = mail.raw.replace(/=\r?\n/g, '');
    return /verify\/channel\/([A-Za-z0-9_-]{43})/.exec(body)![1]!;
  };

  it('confirms the address before paging, then pages by mail', async () => {
    const created = await api('POST', '/api/v1/notification-channels', { name: 'ops mail', config: { type: 'email', to: 'ops@example.com' } });
    assert.equal(created.statusCode, 201, created.body);
    const channel = created.json();
    assert.equal(channel.verified, false);
    const verification = await mailTo('ops@example.com');
    assert.match(verification.raw, /Subject: Confirm Keepwatch alerts for ops mail/);
    assert.match(verification.raw.replace(/=\r?\n/g, ''), /https:\/\/keepwatch\.example\/verify\/channel\/[A-Za-z0-9_-]{43}/);

    const id = (await api('POST', '/api/v1/targets', httpTarget({ name: 'store', alert_confirmations: 1, recovery_period_secs: 0, renotify_interval_secs: 0, alerts: [{ channel_id: channel.id }] }))).json().id as string;
    const push = async (status: 'up' | 'down', at: number) => {
      t.services.results.push({ targetId: id, orgId: tenant.orgId, region: 'local', status, duration_ms: 3, error: status === 'down' ? 'HTTP 502' : null, checkedAt: new Date(at), staleAfterMs: 30_000 });
      await t.services.results.flush();
    };
    await push('down', Date.now() - 60_000);
    const [first] = (await api('GET', `/api/v1/incidents?target_id=${id}`)).json().incidents;
    assert.equal((await api('GET', `/api/v1/incidents/${first.id}/notifications`)).json().total, 0, 'unconfirmed: no page');

    // A mail scanner or link preview fetches the link: it gets the page, and nothing changes.
    const link = linkIn(verification);
    for (const method of ['GET', 'HEAD'] as const) {
      const shown = await t.inject({ method, url: link });
      assert.equal(shown.statusCode, 200, shown.body);
      assert.match(String(shown.headers['content-type']), /^text\/html/);
      assert.equal(shown.headers['cache-control'], 'no-store');
    }
    const shown = await t.inject({ method: 'GET', url: link });
    assert.match(shown.body, /<form method="post"><button type="submit"[^>]*>Confirm this address<\/button><\/form>/);
    assert.match(shown.body, /<b>ops mail<\/b> will be sent to <b>ops@example\.com<\/b>/);
    assert.equal(await verifiedOf(channel.id), false, 'looking at the page confirms nothing');

    const confirm = await submitForm(link);
    assert.equal(confirm.statusCode, 200, confirm.body);
    assert.match(String(confirm.headers['content-type']), /^text\/html/);
    assert.equal(confirm.headers['cache-control'], 'no-store');
    assert.match(confirm.body, /Confirmed\. Alerts for ops mail will now be sent to ops@example\.com\./);
    assert.equal(await verifiedOf(channel.id), true);
    expectGonePage(await t.inject({ method: 'GET', url: link }), 'used: GET');
    expectGonePage(await submitForm(link), 'used: POST');

    await push('up', Date.now() - 50_000);
    await push('down', Date.now() - 40_000);
    await worker.tick();
    // The first incident closed, silently (it never paged this address), and a second opened.
    const alert = await mailTo('ops@example.com');
    const [recovery] = (await api('GET', `/api/v1/incidents/${first.id}/notifications`)).json().notifications;
    assert.equal(recovery, undefined, 'no recovery for an incident that never paged the channel');
    assert.match(alert.raw, /Subject: Incident opened: store is down/);
    assert.match(alert.raw, /Content-Type: text\/plain/);
    assert.match(alert.raw, /Content-Type: text\/html/);
    assert.match(alert.raw, /X-Keepwatch-Notification: [0-9a-f-]{36}/);
    const [second] = (await api('GET', `/api/v1/incidents?target_id=${id}&status=open`)).json().incidents;
    const [sent] = (await api('GET', `/api/v1/incidents/${second.id}/notifications`)).json().notifications;
    assert.equal(sent.status, 'delivered');
  });

  it('confirms a new address again, limits resends to one a minute, and refuses what has nothing to confirm', async () => {
    const channel = (await api('POST', '/api/v1/notification-channels', { name: 'oncall', config: { type: 'email', to: 'a@example.com' } })).json();
    const first = await mailTo('a@example.com');
    // The button's POST also works with no body at all.
    assert.equal((await t.inject({ method: 'POST', url: linkIn(first) })).statusCode, 200);
    assert.equal(await verifiedOf(channel.id), true);
    const renamed = (await api('PATCH', `/api/v1/notification-channels/${channel.id}`, { name: 'on call' })).json();
    assert.equal(renamed.verified, true, 'same address: still confirmed');
    const moved = (await api('PATCH', `/api/v1/notification-channels/${channel.id}`, { config: { type: 'email', to: 'b@example.com' } })).json();
    assert.equal(moved.verified, false);
    const superseded = await mailTo('b@example.com');
    expectError(await api('POST', `/api/v1/notification-channels/${channel.id}/resend-verification`), 429, 'RATE_LIMITED');
    await t.services.quotaEvents.flush();
    const [refusal] = await t.services.db.query<{ details: { channel_id: string } }>(
      `SELECT details FROM quota_events WHERE event = 'rate_limited' AND quota = 'verification_mail'`);
    assert.equal(refusal?.details.channel_id, channel.id, 'the refused resend is recorded');
    t.clock.advance(61_000);
    assert.equal((await api('POST', `/api/v1/notification-channels/${channel.id}/resend-verification`)).statusCode, 204);
    const again = await mailTo('b@example.com');
    expectGonePage(await t.inject({ method: 'GET', url: linkIn(superseded) }), 'superseded by the resend: GET');
    expectGonePage(await submitForm(linkIn(superseded)), 'superseded by the resend: POST');
    assert.equal(await verifiedOf(channel.id), false);
    assert.equal((await submitForm(linkIn(again))).statusCode, 200);
    assert.equal(await verifiedOf(channel.id), true);

    const hook = (await api('POST', '/api/v1/notification-channels', { name: 'hook', config: { type: 'slack', webhook_url: 'https://hooks.slack.com/services/T/B/X' } })).json();
    assert.equal(hook.verified, true);
    expectError(await api('POST', `/api/v1/notification-channels/${hook.id}/resend-verification`), 409, 'CONFLICT');
    expectGonePage(await t.inject({ method: 'GET', url: '/verify/channel/nope' }), 'unknown: GET');
    expectGonePage(await submitForm('/verify/channel/nope'), 'unknown: POST');
    expectGonePage(await t.inject({ method: 'POST', url: '/verify/channel/nope' }), 'unknown: POST, no body');
  });

  it('mails a test send only to an address confirmed for the org; an unconfirmed one is answered "not sent", with nothing mailed', async () => {
    const test = async (path: string, body?: object) => (await api('POST', `/api/v1/notification-channels${path}`, body)).json() as { delivered: boolean; error: string | null };
    const stranger = await test('/test', { config: { type: 'email', to: 'stranger@example.com' } });
    assert.equal(stranger.delivered, false);
    assert.match(stranger.error!, /^not sent: stranger@example\.com is confirmed by no email channel of this org/);
    const channel = (await api('POST', '/api/v1/notification-channels', { name: 'tested', config: { type: 'email', to: 'tested@example.com' } })).json();
    const verification = await mailTo('tested@example.com');
    const saved = await test(`/${channel.id}/test`);
    assert.equal(saved.delivered, false);
    assert.match(saved.error!, /resend-verification/);
    await sleep(200);
    assert.equal(inbox.filter((m) => m.to === 'stranger@example.com' || m.to === 'tested@example.com').length, 0, 'no test mail went out');

    assert.equal((await submitForm(linkIn(verification))).statusCode, 200);
    assert.deepEqual(await test(`/${channel.id}/test`), { delivered: true, error: null });
    assert.match((await mailTo('tested@example.com')).raw, /Test alert from Keepwatch/);
    assert.deepEqual(await test('/test', { config: { type: 'email', to: 'TESTED@example.com' } }), { delivered: true, error: null }, 'a confirmed address, any case');
    await mailTo('TESTED@example.com');
    // Confirmation is per channel, as its alerts need: a second channel to the confirmed address
    // sends nothing until its own link is followed, and says so of the channel, not the address.
    const second = (await api('POST', '/api/v1/notification-channels', { name: 'tested again', config: { type: 'email', to: 'tested@example.com' } })).json();
    const secondLink = linkIn(await mailTo('tested@example.com'));
    const unconfirmed = await test(`/${second.id}/test`);
    assert.equal(unconfirmed.delivered, false);
    assert.match(unconfirmed.error!, /^not sent: tested@example\.com is not confirmed for this channel yet/);
    assert.equal((await submitForm(secondLink)).statusCode, 200);
    assert.deepEqual(await test(`/${second.id}/test`), { delivered: true, error: null });
    await mailTo('tested@example.com');
    // Another org has not confirmed it.
    const other = await createTenantWithToken(t, { plan: 'team' });
    const elsewhere = (await client(t, other.token)('POST', '/api/v1/notification-channels/test', { config: { type: 'email', to: 'tested@example.com' } })).json();
    assert.equal(elsewhere.delivered, false);
  });

  // Last: it moves the shared clock a week on.
  it('escapes what the page shows, and expires the link after 7 days', async () => {
    const channel = (await api('POST', '/api/v1/notification-channels', { name: '<script>alert("x")</script> & co', config: { type: 'email', to: 'late@example.com' } })).json();
    const link = linkIn(await mailTo('late@example.com'));
    t.clock.advance(7 * 86_400_000 - 60_000);
    const shown = await t.inject({ method: 'GET', url: link });
    assert.equal(shown.statusCode, 200, 'a minute before expiry it still shows');
    assert.doesNotMatch(shown.body, /<script>/);
    assert.match(shown.body, /<b>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; co<\/b>/);
    assert.match(shown.body, /<title>Confirm alerts for &lt;script&gt;/);
    t.clock.advance(120_000);
    expectGonePage(await t.inject({ method: 'GET', url: link }), 'expired: GET');
    expectGonePage(await submitForm(link), 'expired: POST');
    assert.equal(await verifiedOf(channel.id), false);
  });
});
