// Property-based tests of the notification channel and maintenance window bodies (issue 3): valid
// bodies of every channel kind and of windows, then mutated ones (generic junk at any depth, plus
// junk in the fields with rules of their own: secrets, URLs, tags, dates, components). Whatever
// comes in: never a 5xx, every error is the documented envelope with a field, and nothing is
// half-written (a rejected POST adds no row, a rejected PATCH leaves the resource byte-identical).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, httpTarget, overrideCaps, type Api, type Json } from '../targets/helpers.js';
import {
  assertEnvelope, assertReached, compact, NUM_RUNS, oddNumber, oddString, opt, outcome, payload, setKey, uuid, wrongValue,
  type Body, type Mutation,
} from './fuzz-kit.js';

const PUBLIC_IP = '93.184.216.34';
const publicUrl = fc.stringMatching(/^[a-z0-9/_-]{0,20}$/).map((p) => `https://${PUBLIC_IP}/${p}`);
const secret = fc.stringMatching(/^[A-Za-z0-9_:-]{1,40}$/);
const tagName = fc.constantFrom('prod', 'Prod', 'eu', ' api ', 'db');

const channelConfig: fc.Arbitrary<Body> = fc.oneof(
  fc.record({ type: fc.constant('webhook'), url: publicUrl, secret: opt(fc.oneof(secret, fc.constant(null))) }).map(compact),
  fc.record({ type: fc.constantFrom('slack', 'discord', 'teams'), webhook_url: publicUrl }),
  fc.record({ type: fc.constant('email'), to: fc.constantFrom('oncall@example.com', 'a.b+c@example.org') }),
  fc.record({ type: fc.constant('ntfy'), server_url: publicUrl, topic: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), token: opt(secret) }).map(compact),
  fc.record({ type: fc.constant('telegram'), bot_token: fc.constant('123456:ABCdefGHIjklMNOpqrSTUvwx'), chat_id: fc.oneof(fc.integer(), fc.constantFrom('@keepwatch_ops', '-100123')) }),
  fc.record({ type: fc.constant('pagerduty'), routing_key: fc.constant('a'.repeat(32)) }),
  fc.record({ type: fc.constant('sms'), to: fc.constantFrom('+447700900123', '+15555550100') }),
);
const channelBody: fc.Arbitrary<Body> = fc.record({
  name: fc.oneof(fc.constant('ops'), fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0)),
  config: channelConfig,
  enabled: opt(fc.boolean()),
  auto_bind_tags: opt(fc.uniqueArray(tagName, { maxLength: 3, comparator: (a, b) => a.trim().toLowerCase() === b.trim().toLowerCase() })),
  acknowledge_button: opt(fc.boolean()),
  resolve_button: opt(fc.boolean()),
}).map(compact);

const junkUrl = fc.constantFrom('', 'ftp://93.184.216.34/', 'https://127.0.0.1/x', 'http://[::1]/', 'https://10.0.0.1/', 'https://[::ffff:7f00:1]/', 'not a url', 'https://', `https://${'a'.repeat(2050)}.com/`, 'https://0x7f000001/');
const channelMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.constantFrom('name', 'enabled', 'auto_bind_tags', 'acknowledge_button', 'resolve_button', 'config'), fc.oneof(oddString, oddNumber, wrongValue))
    .map(([k, v]): Mutation => (b) => setKey(b, k, v)),
  fc.oneof(fc.array(fc.oneof(tagName, oddString), { minLength: 1, maxLength: 4 }), fc.constant(['Prod', 'prod'])).map((v): Mutation => (b) => setKey(b, 'auto_bind_tags', v)),
  fc.tuple(fc.constantFrom('url', 'webhook_url', 'server_url', 'api_base_url', 'events_url', 'secret', 'token', 'bot_token', 'routing_key', 'to', 'topic', 'chat_id', 'type'),
    fc.oneof(junkUrl, oddString, oddNumber, wrongValue, fc.constant('***')))
    .map(([k, v]): Mutation => (b) => { if (typeof b.config === 'object' && b.config !== null && !Array.isArray(b.config)) setKey(b.config as Body, k, v); return b; }),
);

const HOUR = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
const junkDate = fc.constantFrom('', 'tomorrow', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-11-23', '2026-11-23T10:00:00', '+275760-09-13T00:00:00Z');

describe('fuzzing the channel and maintenance bodies', () => {
  let t: TestApp;
  let api: Api;
  let token: string;
  let monitorIds: string[] = [];
  const report: Record<string, string[]> = {};

  const send = (method: 'POST' | 'PATCH', url: string, text: string) => t.inject({
    method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: text,
  });
  const total = async (url: string) => {
    const res = await api('GET', `${url}?limit=1`);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Json).total as number;
  };

  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': randomBytes(32).toString('base64') } });
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    token = tenant.token;
    await overrideCaps(t, tenant.accountId, {
      api_writes_per_minute: 1_000_000, api_reads_per_minute: 1_000_000, max_notification_channels: 1_000_000, max_maintenance_windows: 1_000_000,
    });
    api = client(t, token);
    monitorIds = await Promise.all([1, 2].map(async (i) => {
      const res = await api('POST', '/api/v1/targets', httpTarget({ name: `covered ${i}` }));
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as Json).id as string;
    }));
  });
  after(async () => {
    for (const [route, seen] of Object.entries(report)) process.stdout.write(`# ${route}: ${seen.join(', ')}\n`);
    await t.close();
  });

  /** POST: never a 5xx, enveloped errors with a field, a rejected POST adds no row. */
  async function fuzzCreate(url: string, valid: fc.Arbitrary<Body>, mutation: fc.Arbitrary<Mutation>): Promise<void> {
    const seen = new Set<string>();
    await fc.assert(fc.asyncProperty(payload(valid, mutation), async ({ text, sent }) => {
      const before = await total(url);
      const res = await send('POST', url, text);
      const what = `POST ${url} ${text.slice(0, 300)}`;
      assertEnvelope(res, what, sent);
      seen.add(outcome(res));
      if (res.statusCode < 300) { assert.equal(res.statusCode, 201, what); return; }
      assert.equal(await total(url), before, `${what}: rejected with ${res.body} but the count changed`);
    }), { numRuns: NUM_RUNS, includeErrorInReport: true });
    report[`POST ${url}`] = [...seen].sort();
    assertReached(seen, `POST ${url}`);
  }

  /** PATCH: never a 5xx, enveloped errors with a field, a rejected PATCH leaves the resource as it was. */
  async function fuzzPatch(url: (id: string) => string, ids: string[], valid: fc.Arbitrary<Body>, mutation: fc.Arbitrary<Mutation>): Promise<Set<string>> {
    const seen = new Set<string>();
    await fc.assert(fc.asyncProperty(fc.constantFrom(...ids), payload(valid, mutation), async (id, { text, sent }) => {
      const before = (await api('GET', url(id))).body;
      const res = await send('PATCH', url(id), text);
      const what = `PATCH ${url(id)} ${text.slice(0, 300)}`;
      assertEnvelope(res, what, sent);
      seen.add(outcome(res));
      if (res.statusCode < 300) { assert.equal(res.statusCode, 200, what); return; }
      assert.equal((await api('GET', url(id))).body, before, `${what}: rejected with ${res.body} but the resource changed`);
    }), { numRuns: NUM_RUNS, includeErrorInReport: true });
    return seen;
  }

  it('valid channel bodies of every kind are accepted, so mutations start from passing requests', async () => {
    await fc.assert(fc.asyncProperty(channelBody, async (body) => {
      const res = await api('POST', '/api/v1/notification-channels', body);
      assert.equal(res.statusCode, 201, `${JSON.stringify(body)} -> ${res.body}`);
    }), { numRuns: 40, includeErrorInReport: true });
  });

  it('POST and PATCH /api/v1/notification-channels: never a 5xx, errors with a field, nothing half-written', async () => {
    await fuzzCreate('/api/v1/notification-channels', channelBody, channelMutation);
    const ids = await Promise.all(fc.sample(channelBody, { numRuns: 4, seed: 7 }).map(async (body) => {
      const res = await api('POST', '/api/v1/notification-channels', body);
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as Json).id as string;
    }));
    // A PATCH of a channel: any subset of its fields; a new config must keep the channel's kind.
    const patch = fc.tuple(channelBody, fc.nat()).map(([body, n]) => {
      const out: Body = {};
      for (const [i, k] of Object.keys(body).filter((k) => k !== 'config').entries()) if ((n >> i) & 1) out[k] = body[k];
      return out;
    });
    const seen = await fuzzPatch((id) => `/api/v1/notification-channels/${id}`, ids, patch, channelMutation);
    report['PATCH /api/v1/notification-channels/{id}'] = [...seen].sort();
    assertReached(seen, 'PATCH /api/v1/notification-channels/{id}');
  });

  const windowBody = (): fc.Arbitrary<Body> => fc.record({
    title: fc.oneof(fc.constant('DB upgrade'), fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim().length > 0)),
    description: opt(fc.oneof(fc.constant(null), fc.string({ maxLength: 80 }))),
    start: fc.integer({ min: -2, max: 48 }),
    length: fc.integer({ min: 3, max: 72 }),
    components: opt(fc.subarray(monitorIds)),
    suppress_alerts: opt(fc.boolean()),
  }).map(({ start, length, ...rest }) => compact({ ...rest, starts_at: at(start * HOUR), ends_at: at((start + length) * HOUR) }));

  const windowMutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.tuple(fc.constantFrom('title', 'description', 'starts_at', 'ends_at', 'components', 'suppress_alerts'), fc.oneof(oddString, oddNumber, wrongValue, junkDate))
      .map(([k, v]): Mutation => (b) => setKey(b, k, v)),
    fc.constantFrom<Mutation>(
      (b) => setKey(b, 'ends_at', at(-HOUR)),
      (b) => { const s = b.starts_at; b.starts_at = b.ends_at; b.ends_at = s; return b; },
      (b) => setKey(b, 'components', ['00000000-0000-7000-8000-000000000000']),
      (b) => setKey(b, 'components', [...monitorIds, ...monitorIds]),
      (b) => setKey(b, 'components', Array(1001).fill(monitorIds[0])),
      (b) => setKey(b, 'title', 'x'.repeat(201)),
      (b) => setKey(b, 'description', 'x'.repeat(5001)),
    ),
    fc.array(fc.oneof(uuid, oddString), { minLength: 1, maxLength: 3 }).map((v): Mutation => (b) => setKey(b, 'components', v)),
  );

  it('POST and PATCH /api/v1/maintenance: never a 5xx, errors with a field, nothing half-written', async () => {
    await fuzzCreate('/api/v1/maintenance', windowBody(), windowMutation);
    // Windows still to come (PATCH on an ended or cancelled one is refused whole, which tells nothing).
    const ids = await Promise.all([1, 2, 3].map(async (i) => {
      const res = await api('POST', '/api/v1/maintenance', { title: `w${i}`, starts_at: at(24 * HOUR), ends_at: at(30 * HOUR), components: monitorIds });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as Json).id as string;
    }));
    const patch = fc.tuple(windowBody(), fc.nat()).map(([body, n]) => {
      const out: Body = {};
      for (const [i, k] of Object.keys(body).entries()) if ((n >> i) & 1) out[k] = body[k];
      return out;
    });
    const seen = await fuzzPatch((id) => `/api/v1/maintenance/${id}`, ids, patch, windowMutation);
    report['PATCH /api/v1/maintenance/{id}'] = [...seen].sort();
    assertReached(seen, 'PATCH /api/v1/maintenance/{id}');

    const updates = new Set<string>();
    const message = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0), oddString, fc.constant('x'.repeat(2001)));
    await fc.assert(fc.asyncProperty(payload(fc.record({ message }), fc.constant<Mutation>((b) => b)), async ({ text, sent }) => {
      const url = `/api/v1/maintenance/${ids[0]}/updates`;
      const res = await send('POST', url, text);
      assertEnvelope(res, `POST ${url} ${text.slice(0, 300)}`, sent);
      updates.add(outcome(res));
    }), { numRuns: Math.min(NUM_RUNS, 45), includeErrorInReport: true });
    report['POST /api/v1/maintenance/{id}/updates'] = [...updates].sort();
  });
});
