// Notification channels CRUD (monitoring-api.md, "Notification channel", "Notification channels";
// CONTRACT.md channel kinds): shapes per kind, secrets sealed and redacted, auto_bind_tags,
// the account quota, SMS on plans without it, unbinding on delete, tenancy and scopes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, type Api, type Json } from '../targets/helpers.js';

const BASE = '/api/v1/notification-channels';
const WEBHOOK = { type: 'webhook', url: 'https://93.184.216.34/hooks/keepwatch', secret: 'whsec-1' };
const PD_KEY = 'a'.repeat(32);

describe('notification channels', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': randomBytes(32).toString('base64') } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const create = (body: Json) => api('POST', BASE, body);
  const storedConfig = async (id: string) =>
    (await t.services.db.query<{ config: Json }>('SELECT config FROM notification_channels WHERE id = $1', [id]))[0]!.config;

  it('creates with defaults, Location and write_source; the secret is sealed at rest and redacted in every answer', async () => {
    const res = await create({ name: ' Ops hook ', config: WEBHOOK });
    assert.equal(res.statusCode, 201, res.body);
    const channel = res.json() as Json;
    assert.equal(res.headers.location, `${BASE}/${channel.id}`);
    assert.deepEqual(
      { ...channel, id: undefined, created_at: undefined, updated_at: undefined },
      { id: undefined, name: 'Ops hook', enabled: true, config: { ...WEBHOOK, secret: '***' }, auto_bind_tags: [], acknowledge_button: true,
        resolve_button: false, write_source: 'api', verified: true, created_at: undefined, updated_at: undefined });
    const stored = await storedConfig(channel.id);
    assert.notEqual(stored.secret, 'whsec-1');
    assert.ok(!JSON.stringify(stored).includes('whsec-1'), 'the secret is not stored in the clear');
    assert.deepEqual((await api('GET', `${BASE}/${channel.id}`)).json(), channel);
    const list = (await api('GET', BASE)).json() as Json;
    assert.deepEqual(list.notification_channels.find((c: Json) => c.id === channel.id), channel);
    assert.equal(typeof list.total, 'number');
  });

  it('every kind of CONTRACT.md is accepted with its fields; secrets of each kind are redacted', async () => {
    const kinds: Array<[Json, Json]> = [
      [{ type: 'slack', webhook_url: 'https://93.184.216.34/services/T/B/x' }, { webhook_url: '***' }],
      [{ type: 'discord', webhook_url: 'https://93.184.216.34/api/webhooks/1/x' }, { webhook_url: '***' }],
      [{ type: 'teams', webhook_url: 'https://93.184.216.34/webhookb2/x' }, { webhook_url: '***' }],
      [{ type: 'email', to: 'oncall@example.com' }, {}],
      [{ type: 'ntfy', server_url: 'https://93.184.216.34', topic: 'kw-alerts', token: 'tk_secret' }, { token: '***' }],
      [{ type: 'telegram', bot_token: '123456:ABCdefGHIjklMNOpqrSTUvwx', chat_id: -1001234567890 }, { bot_token: '***' }],
      [{ type: 'telegram', bot_token: '123456:ABCdefGHIjklMNOpqrSTUvwx', chat_id: '@keepwatch_ops', api_base_url: 'https://93.184.216.35' }, { bot_token: '***' }],
      [{ type: 'pagerduty', routing_key: PD_KEY }, { routing_key: '***' }],
      [{ type: 'sms', to: '+447700900123' }, {}],
      [{ type: 'webhook', url: 'http://93.184.216.34/x' }, {}],
    ];
    for (const [config, redacted] of kinds) {
      const res = await create({ name: config.type, config });
      assert.equal(res.statusCode, 201, `${config.type}: ${res.body}`);
      assert.deepEqual(res.json().config, { ...config, ...redacted });
    }
  });

  it('bad configs name the field; unknown keys are 422 INVALID_JSON', async () => {
    const bad: Array<[Json, number, string, string]> = [
      [{ type: 'slack' }, 400, 'VALIDATION_FAILED', 'config.webhook_url'],
      [{ type: 'email', to: 'not-an-address' }, 400, 'VALIDATION_FAILED', 'config.to'],
      [{ type: 'ntfy', server_url: 'https://93.184.216.34', topic: 'has space' }, 400, 'VALIDATION_FAILED', 'config.topic'],
      [{ type: 'telegram', bot_token: 'nope', chat_id: 1 }, 400, 'VALIDATION_FAILED', 'config.bot_token'],
      // Past 2^53 an integer id would be stored rounded (1e400 even as null).
      [{ type: 'telegram', bot_token: '123456:ABCdefGHIjklMNOpqrSTUvwx', chat_id: 2 ** 53 + 2 }, 400, 'VALIDATION_FAILED', 'config.chat_id'],
      [{ type: 'telegram', bot_token: '123456:ABCdefGHIjklMNOpqrSTUvwx', chat_id: -1e300 }, 400, 'VALIDATION_FAILED', 'config.chat_id'],
      [{ type: 'pagerduty', routing_key: 'short' }, 400, 'VALIDATION_FAILED', 'config.routing_key'],
      [{ type: 'sms', to: '07700900123' }, 400, 'VALIDATION_FAILED', 'config.to'],
      [{ type: 'webhook', url: 'ftp://93.184.216.34/' }, 400, 'VALIDATION_FAILED', 'config.url'],
      [{ type: 'carrier-pigeon' }, 400, 'VALIDATION_FAILED', 'config.type'],
      [{ type: 'slack', webhook_url: 'https://93.184.216.34/', channel: '#ops' }, 422, 'INVALID_JSON', 'config.channel'],
    ];
    for (const [config, status, code, field] of bad) expectError(await create({ name: 'x', config }), status, code, field);
    expectError(await create({ name: '   ', config: WEBHOOK }), 400, 'VALIDATION_FAILED', 'name');
    expectError(await create({ name: 'x', config: WEBHOOK, write_source: 'ui' }), 422, 'INVALID_JSON', 'write_source');
    expectError(await create({ name: 'x' }), 400, 'VALIDATION_FAILED', 'config');
  });

  it('URLs the service would call are refused in blocked ranges', async () => {
    expectError(await create({ name: 'x', config: { type: 'webhook', url: 'http://127.0.0.1:8080/' } }), 400, 'VALIDATION_FAILED', 'config.url');
    expectError(await create({ name: 'x', config: { type: 'slack', webhook_url: 'https://[::ffff:10.0.0.1]/' } }), 400, 'VALIDATION_FAILED', 'config.webhook_url');
    expectError(await create({ name: 'x', config: { type: 'pagerduty', routing_key: PD_KEY, events_url: 'http://169.254.169.254/' } }), 400, 'VALIDATION_FAILED', 'config.events_url');
  });

  it('a URL holding a password is refused, pointing at no field channels lack', async () => {
    const res = await create({ name: 'x', config: { type: 'webhook', url: 'https://u:p@93.184.216.34/x' } });
    expectError(res, 400, 'VALIDATION_FAILED', 'config.url');
    assert.match(res.json().error.message, /carries no credential/);
    assert.doesNotMatch(res.json().error.message, /basic_auth/);
  });

  it('PATCH: only sent fields change; without config the stored secret stays; *** is REDACTION_SENTINEL; write_source restamped', async () => {
    const channel = (await create({ name: 'p', config: WEBHOOK })).json() as Json;
    const sealed = await storedConfig(channel.id);
    const renamed = await api('PATCH', `${BASE}/${channel.id}`, { name: 'renamed', enabled: false }, { 'x-keepwatch-client': 'iac' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual([renamed.json().name, renamed.json().enabled, renamed.json().write_source, renamed.json().config], ['renamed', false, 'iac', channel.config]);
    assert.deepEqual(await storedConfig(channel.id), sealed);
    expectError(await api('PATCH', `${BASE}/${channel.id}`, { config: { ...WEBHOOK, secret: '***' } }), 400, 'REDACTION_SENTINEL', 'config.secret');
    expectError(await create({ name: 'x', config: { type: 'pagerduty', routing_key: '***' } }), 400, 'REDACTION_SENTINEL', 'config.routing_key');
    const replaced = (await api('PATCH', `${BASE}/${channel.id}`, { config: { type: 'email', to: 'a@example.com' } })).json() as Json;
    assert.deepEqual([replaced.config, replaced.write_source], [{ type: 'email', to: 'a@example.com' }, 'api']);
    expectError(await api('PATCH', `${BASE}/${channel.id}`, { id: channel.id }), 422, 'INVALID_JSON', 'id');
    // Another org's channel is 404 whatever the body: its rules are not run for a stranger.
    const other = client(t, (await createTenantWithToken(t)).token);
    expectError(await other('PATCH', `${BASE}/${channel.id}`, { config: { ...WEBHOOK, secret: '***' } }), 404, 'NOT_FOUND');
    expectError(await other('PATCH', `${BASE}/${channel.id}`, { config: { type: 'webhook', url: 'http://127.0.0.1/hook' } }), 404, 'NOT_FOUND');
  });

  it('a telegram, pagerduty or chat config read back and sent unchanged is REDACTION_SENTINEL, not a pattern or URL failure; the stored secret stays', async () => {
    const configs = [
      { type: 'telegram', bot_token: '123456:ABCdefGHIjklMNOpqrSTUvwx', chat_id: 42 },
      { type: 'pagerduty', routing_key: PD_KEY },
      { type: 'slack', webhook_url: 'https://93.184.216.34/services/T/B/secret-part' },
    ];
    const secretFields: Record<string, string> = { telegram: 'bot_token', pagerduty: 'routing_key', slack: 'webhook_url' };
    for (const config of configs) {
      const channel = (await create({ name: config.type, config })).json() as Json;
      const secretField = secretFields[config.type]!;
      const sealed = await storedConfig(channel.id);
      assert.ok(!JSON.stringify(sealed).includes(String((config as Json)[secretField])), `${config.type}: sealed at rest`);
      const shown = (await api('GET', `${BASE}/${channel.id}`)).json() as Json;
      assert.equal(shown.config[secretField], '***');
      expectError(await api('PATCH', `${BASE}/${channel.id}`, { config: shown.config }), 400, 'REDACTION_SENTINEL', `config.${secretField}`);
      expectError(await api('PATCH', `${BASE}/${channel.id}`, { ...shown, id: undefined, write_source: undefined, verified: undefined, created_at: undefined, updated_at: undefined }), 400, 'REDACTION_SENTINEL', `config.${secretField}`);
      expectError(await api('POST', `${BASE}/test`, { config: shown.config }), 400, 'REDACTION_SENTINEL', `config.${secretField}`);
      // As with check credentials: leaving `config` out keeps the stored secret byte for byte.
      assert.equal((await api('PATCH', `${BASE}/${channel.id}`, { name: 'renamed' })).statusCode, 200);
      assert.deepEqual(await storedConfig(channel.id), sealed);
    }
    // A malformed secret is still the pattern's.
    expectError(await create({ name: 'x', config: { type: 'telegram', bot_token: '123456:short', chat_id: 1 } }), 400, 'VALIDATION_FAILED', 'config.bot_token');
  });

  it('a secret containing the sentinel is REDACTION_SENTINEL like a check credential; a config without its optional secret drops it', async () => {
    expectError(await create({ name: 'x', config: { ...WEBHOOK, secret: 'whsec-***' } }), 400, 'REDACTION_SENTINEL', 'config.secret');
    expectError(await create({ name: 'x', config: { type: 'pagerduty', routing_key: `${'a'.repeat(29)}***` } }), 400, 'REDACTION_SENTINEL', 'config.routing_key');
    expectError(await create({ name: 'x', config: { type: 'ntfy', server_url: 'https://93.184.216.34', topic: 't', token: '***tk' } }), 400, 'REDACTION_SENTINEL', 'config.token');
    const channel = (await create({ name: 'w', config: WEBHOOK })).json() as Json;
    const replaced = (await api('PATCH', `${BASE}/${channel.id}`, { config: { type: 'webhook', url: WEBHOOK.url } })).json() as Json;
    assert.deepEqual(replaced.config, { type: 'webhook', url: WEBHOOK.url });
    assert.equal((await storedConfig(channel.id)).secret, undefined);
  });

  it('auto_bind_tags: tag rules, case-insensitive single spelling, replaced whole on PATCH, [] clears', async () => {
    const channel = (await create({ name: 't', config: WEBHOOK, auto_bind_tags: [' Prod ', 'prod', 'PROD', 'db', 'DB '] })).json() as Json;
    assert.deepEqual(channel.auto_bind_tags, ['Prod', 'db']);
    expectError(await create({ name: 't', config: WEBHOOK, auto_bind_tags: ['ok', '  '] }), 400, 'VALIDATION_FAILED', 'auto_bind_tags[1]');
    expectError(await create({ name: 't', config: WEBHOOK, auto_bind_tags: ['a\u200bb'] }), 400, 'VALIDATION_FAILED', 'auto_bind_tags[0]');
    const tooMany = Array.from({ length: 51 }, (_, i) => `t${i}`);
    expectError(await create({ name: 't', config: WEBHOOK, auto_bind_tags: tooMany }), 400, 'VALIDATION_FAILED', 'auto_bind_tags');
    assert.equal((await create({ name: 't', config: WEBHOOK, auto_bind_tags: [...tooMany.slice(0, 50), 'T0'] })).statusCode, 201, 'counted after de-duplication');
    const patched = (await api('PATCH', `${BASE}/${channel.id}`, { auto_bind_tags: ['web'] })).json() as Json;
    assert.deepEqual(patched.auto_bind_tags, ['web']);
    assert.deepEqual((await api('PATCH', `${BASE}/${channel.id}`, { auto_bind_tags: [] })).json().auto_bind_tags, []);
  });

  it('delete answers 204 and removes the channel from every monitor bound to it, in one transaction', async () => {
    const doomed = (await create({ name: 'doomed', config: WEBHOOK })).json() as Json;
    const kept = (await create({ name: 'kept', config: WEBHOOK })).json() as Json;
    const both = (await api('POST', '/api/v1/targets', httpTarget({ alerts: [{ channel_id: doomed.id }, { channel_id: kept.id }] }))).json() as Json;
    const only = (await api('POST', '/api/v1/targets', httpTarget({ alerts: [{ channel_id: doomed.id }] }))).json() as Json;
    const res = await api('DELETE', `${BASE}/${doomed.id}`, undefined, { 'x-keepwatch-client': 'iac' });
    assert.equal(res.statusCode, 204);
    const after1 = (await api('GET', `/api/v1/targets/${both.id}`)).json() as Json;
    assert.deepEqual(after1.alerts, [{ channel_id: kept.id }]);
    assert.equal(after1.write_source, 'iac');
    assert.deepEqual((await api('GET', `/api/v1/targets/${only.id}`)).json().alerts, []);
    expectError(await api('GET', `${BASE}/${doomed.id}`), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `${BASE}/${doomed.id}`), 404, 'NOT_FOUND');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ alerts: [{ channel_id: doomed.id }] })), 400, 'INVALID_ALERT_CONFIG', 'alerts[0].channel_id');
  });

  it("another org's channel is 404 everywhere and cannot be bound", async () => {
    const other = await createTenantWithToken(t, { plan: 'team' });
    const theirs = (await client(t, other.token)('POST', BASE, { name: 'theirs', config: WEBHOOK })).json() as Json;
    expectError(await api('GET', `${BASE}/${theirs.id}`), 404, 'NOT_FOUND');
    expectError(await api('PATCH', `${BASE}/${theirs.id}`, { name: 'mine' }), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `${BASE}/${theirs.id}`), 404, 'NOT_FOUND');
    expectError(await api('POST', '/api/v1/targets', httpTarget({ alerts: [{ channel_id: theirs.id }] })), 400, 'INVALID_ALERT_CONFIG', 'alerts[0].channel_id');
    assert.ok(!(await api('GET', `${BASE}?limit=1000`)).json().notification_channels.some((c: Json) => c.id === theirs.id));
  });

  it('scopes: channels:read reads, channels:write writes, channels:delete deletes', async () => {
    const reader = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['channels:read'] }));
    const writer = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['channels:write'] }));
    assert.equal((await reader('GET', BASE)).statusCode, 200);
    expectError(await reader('POST', BASE, { name: 'x', config: WEBHOOK }), 403, 'INSUFFICIENT_SCOPE');
    const made = (await writer('POST', BASE, { name: 'x', config: WEBHOOK })).json() as Json;
    assert.equal((await writer('GET', `${BASE}/${made.id}`)).statusCode, 200, 'write implies read');
    expectError(await writer('DELETE', `${BASE}/${made.id}`), 403, 'INSUFFICIENT_SCOPE');
  });

  it('max_notification_channels counts the account; parallel creates at the cap leave exactly the cap', async () => {
    const small = await createTenantWithToken(t, { plan: 'team' });
    const smallApi = client(t, small.token);
    await overrideCaps(t, small.accountId, { max_notification_channels: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => smallApi('POST', BASE, { name: `c${i}`, config: WEBHOOK })));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 5);
    for (const r of results.filter((r) => r.statusCode !== 201)) {
      assert.equal(expectError(r, 422, 'QUOTA_EXCEEDED').quota, 'max_notification_channels');
    }
    const usage = await smallApi('GET', `/api/v1/orgs/${small.orgId}/usage`);
    assert.equal(usage.statusCode, 200, usage.body);
    assert.deepEqual(usage.json().quotas.max_notification_channels, { current: 5, limit: 5 });
    await t.services.quotaEvents.flush();
    const [events] = await t.services.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM quota_events WHERE account_id = $1 AND event = 'quota_exceeded' AND quota = 'max_notification_channels'`, [small.accountId]);
    assert.equal(events!.n, 7);
  });
});

describe('notification channels: SMS needs a plan with SMS alerts (hosted)', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'deployment.mode': 'hosted' } }); });
  after(async () => { await t.close(); });

  it('403 SMS_ALERTS_DISABLED on create; an SMS channel made before a downgrade stays editable', async () => {
    const free = await createTenantWithToken(t, { plan: 'free' });
    const freeApi = client(t, free.token);
    expectError(await freeApi('POST', BASE, { name: 's', config: { type: 'sms', to: '+447700900123' } }), 403, 'SMS_ALERTS_DISABLED');
    const hook = (await freeApi('POST', BASE, { name: 'w', config: WEBHOOK })).json() as Json;
    expectError(await freeApi('PATCH', `${BASE}/${hook.id}`, { config: { type: 'sms', to: '+447700900123' } }), 403, 'SMS_ALERTS_DISABLED');
    // A test send of an unsaved SMS config is a write of that config as far as the plan goes.
    expectError(await freeApi('POST', `${BASE}/test`, { config: { type: 'sms', to: '+447700900123' } }), 403, 'SMS_ALERTS_DISABLED');

    const team = await createTenantWithToken(t, { plan: 'team' });
    const teamApi = client(t, team.token);
    const sms = (await teamApi('POST', BASE, { name: 's', config: { type: 'sms', to: '+447700900123' } })).json() as Json;
    const moved = await t.operator('PUT', `/operator/accounts/${team.accountId}/plan`, { plan_id: 'free', reason: 'downgrade' });
    assert.equal(moved.statusCode, 200, moved.body);
    const edited = await teamApi('PATCH', `${BASE}/${sms.id}`, { name: 'still here', config: { type: 'sms', to: '+447700900999' } });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal(edited.json().config.to, '+447700900999');
  });
});
