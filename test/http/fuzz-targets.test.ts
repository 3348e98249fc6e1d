// Property-based tests of the target and variable bodies (issue 3): valid bodies of every check kind,
// then mutated ones (dropped keys, unknown keys at every depth, wrong types, out-of-range numbers,
// huge strings, odd unicode with NUL, `***` credentials, junk tags, regions, policies, intervals and
// alerts, anything at all in any field). Whatever comes in: never a 5xx, every error is the documented
// envelope with a field, and nothing is half-written (a rejected POST adds no row, a rejected PATCH
// leaves the stored resource byte-identical). Channel and maintenance bodies: fuzz-channels-maintenance.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { CHECK_KINDS, DNS_RECORD_TYPES, HTTP_METHODS, type CheckKind } from '../../src/targets/constants.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, overrideCaps, type Api, type Json } from '../targets/helpers.js';
import {
  assertEnvelope, assertReached, compact, NUM_RUNS, oddNumber, oddString, opt, outcome, payload, setKey, uuid, wrongValue,
  type Body, type Mutation,
} from './fuzz-kit.js';

// ---------------------------------------------------------------- valid bodies, per kind

const PUBLIC_IP = '93.184.216.34';
const path = fc.stringMatching(/^[a-z0-9/_-]{0,20}$/);
const publicUrl = fc.tuple(fc.constantFrom('https', 'http'), path).map(([s, p]) => `${s}://${PUBLIC_IP}/${p}`);
const hostName = fc.constantFrom(PUBLIC_IP, 'example.com', 'www.example.org', '2606:2800:220:1:248:1893:25c8:1946');
const domain = fc.constantFrom('example.com', 'example.org', 'keepwatch-fuzz.net');
const days = fc.tuple(fc.integer({ min: 2, max: 365 }), fc.integer({ min: 1, max: 364 }))
  .filter(([w, c]) => w > c).map(([warn_days, critical_days]) => ({ warn_days, critical_days }));

const expectedStatus = fc.oneof(
  fc.integer({ min: 100, max: 599 }).map((value) => ({ kind: 'exact', value })),
  fc.tuple(fc.integer({ min: 100, max: 599 }), fc.integer({ min: 100, max: 599 })).map(([a, b]) => ({ kind: 'range', value: { min: Math.min(a, b), max: Math.max(a, b) } })),
  fc.uniqueArray(fc.integer({ min: 100, max: 599 }), { minLength: 1, maxLength: 5 }).map((value) => ({ kind: 'one_of', value })),
);

const checkOf: Record<CheckKind, fc.Arbitrary<Body>> = {
  http: fc.record({
    type: fc.constant('http'), url: publicUrl, method: opt(fc.constantFrom(...HTTP_METHODS)), timeout: opt(fc.integer({ min: 1, max: 60_000 })),
    follow_redirects: opt(fc.boolean()), max_redirects: opt(fc.integer({ min: 0, max: 20 })), expected_status: opt(expectedStatus),
    expected_body_contains: opt(fc.constantFrom('ok', null)), headers: opt(fc.constantFrom({}, { 'X-A': 'b' }, { Authorization: 'Bearer {{fuzz_var}}' })),
    body: opt(fc.constantFrom('{}', null)), verify_tls: opt(fc.boolean()), basic_auth: opt(fc.constantFrom(['u', 'p'], null)),
    bearer_token: opt(fc.constantFrom('tok', null)), ip_version: opt(fc.constantFrom('any', 'ipv4')),
  }).map((c) => {
    // Credentials over https require verify_tls (a rule the fuzzer reaches through its mutations).
    if (c.basic_auth || c.bearer_token) c.verify_tls = undefined;
    return compact(c);
  }),
  tcp: fc.record({ type: fc.constant('tcp'), host: hostName, port: fc.integer({ min: 1, max: 65535 }), timeout: opt(fc.integer({ min: 1, max: 60_000 })) }).map(compact),
  ping: fc.record({ type: fc.constant('ping'), host: hostName, timeout: opt(fc.integer({ min: 1, max: 60_000 })) }).map(compact),
  dns: fc.record({ type: fc.constant('dns'), domain, record_type: fc.constantFrom(...DNS_RECORD_TYPES), expected_contains: opt(fc.constantFrom('1.2.3.4', null)) }).map(compact),
  heartbeat: fc.record({ type: fc.constant('heartbeat'), period: opt(fc.integer({ min: 60_000, max: 30 * 86_400_000 })), grace: opt(fc.integer({ min: 0, max: 86_400_000 })) }).map(compact),
  manual: fc.constant({ type: 'manual' }),
  tls_cert: fc.tuple(fc.record({ type: fc.constant('tls_cert'), host: hostName, port: opt(fc.integer({ min: 1, max: 65535 })) }), opt(days)).map(([c, d]) => compact({ ...c, ...d })),
  domain_expiry: fc.tuple(fc.record({ type: fc.constant('domain_expiry'), domain }), opt(days)).map(([c, d]) => compact({ ...c, ...d })),
  flow: fc.record({
    type: fc.constant('flow'), start_url: publicUrl,
    steps: fc.tuple(
      fc.array(fc.oneof(
        path.map((p) => ({ op: 'goto', url: `/${p.replace(/^\/+/, '')}` })),
        fc.constantFrom({ op: 'click', selector: '#go' }, { op: 'wait_for', selector: 'main' }, { op: 'fill', selector: '#pw', value: '{{fuzz_var}}' }),
      ), { maxLength: 4 }),
      fc.constantFrom({ op: 'assert_text', contains: 'Welcome' }, { op: 'assert_url', contains: '/home' }, { op: 'assert_text', contains: 'x', selector: 'h1' }),
    ).map(([head, assertion]) => [...head, assertion]),
    timeout: opt(fc.integer({ min: 1000, max: 120_000 })),
  }).map(compact),
};

const FLOOR: Record<CheckKind, number> = { http: 30, tcp: 30, ping: 30, dns: 30, heartbeat: 60, manual: 60, flow: 300, tls_cert: 3600, domain_expiry: 43200 };
const NO_REGIONS = new Set<CheckKind>(['heartbeat', 'manual']);

/** Top-level fields that suit the kind (manual: exactly 60 s, one confirmation, no recovery period, no regions). */
const topFields = (kind: CheckKind): fc.Arbitrary<Body> => fc.record({
  name: fc.oneof(fc.constant('web'), fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0)),
  interval: opt(kind === 'manual' ? fc.constant(60) : kind === 'heartbeat' ? fc.integer({ min: 60, max: 300 }) : fc.integer({ min: FLOOR[kind], max: 86400 })),
  enabled: opt(fc.boolean()),
  tags: opt(fc.array(fc.constantFrom('prod', 'eu', 'api', ' spaced ', 'Prod'), { maxLength: 4 })),
  regions: opt(fc.constant<string[]>(NO_REGIONS.has(kind) ? [] : ['local'])),
  group_name: opt(fc.constantFrom('core', null)),
  alerts: opt(fc.constant([])),
  alert_confirmations: opt(kind === 'manual' ? fc.constant(1) : fc.integer({ min: 1, max: 10 })),
  notify_recovery: opt(fc.boolean()),
  renotify_interval_secs: opt(fc.constantFrom(0, 60, 3600)),
  recovery_period_secs: opt(kind === 'manual' ? fc.constant(0) : fc.integer({ min: 0, max: 1800 })),
  region_policy: opt(NO_REGIONS.has(kind) ? fc.constant('any') : fc.constantFrom('any', 'majority', 'all', { count: 1 })),
}).map(compact);

const validCreate = (kind: CheckKind) => fc.tuple(topFields(kind), checkOf[kind]).map(([top, check]) => ({ ...top, check }));
/** A PATCH of a target of `kind`: some top fields, and sometimes a whole new check of the same kind. */
const validPatch = (kind: CheckKind) => fc.tuple(topFields(kind), checkOf[kind], fc.boolean(), fc.nat())
  .map(([top, check, withCheck, n]) => {
    const keys = Object.keys(top);
    const body: Body = {};
    for (const [i, k] of keys.entries()) if ((n >> i) & 1) body[k] = top[k];
    if (withCheck) body.check = check;
    return body;
  });

const junkTag = fc.oneof(
  fc.constantFrom('', '   ', 'a\u0000b', 'a\u0007', '\u200B', 'zero\u200Bwidth', '\uFEFFbom', 'soft\u00ADhyphen', 'rtl\u202E', 'tab\tbed', 'new\nline', '\u2028', '\u00A0', 'x'.repeat(51), 'é'.repeat(50), 'e\u0301'.repeat(30), '😀'.repeat(51), '\uD800', 'x'.repeat(1025)),
  oddString,
);
const junkRegion = fc.oneof(fc.constantFrom('local', 'LOCAL', ' local', 'nowhere', '', 'x'.repeat(65), '\u0000', 'local\u0000', '%', '../local'), oddString);

/** Field-aware mutations: junk in the fields with their own rules, at the top level. */
const fieldMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.oneof(fc.array(junkTag, { minLength: 1, maxLength: 3 }), fc.array(fc.constant('t'), { minLength: 51, maxLength: 60 }), fc.array(fc.string({ maxLength: 5 }), { minLength: 40, maxLength: 80 }), wrongValue)
    .map((v): Mutation => (b) => setKey(b, 'tags', v)),
  fc.oneof(fc.array(junkRegion, { maxLength: 4 }), fc.constant(['local', 'local']), fc.constant(Array(1001).fill('local')), wrongValue)
    .map((v): Mutation => (b) => setKey(b, 'regions', v)),
  fc.oneof(fc.constantFrom('ANY', 'none', '', 'majority ', { count: 0 }, { count: -1 }, { count: 2 }, { count: 1.5 }, { count: 2 ** 40 }, { count: '1' }, { count: 1, x: 1 }, {}, { count: null }), oddNumber.map((count) => ({ count })), wrongValue)
    .map((v): Mutation => (b) => setKey(b, 'region_policy', v)),
  fc.oneof(oddNumber, fc.constantFrom('60', null, 29, 30, 60, 299, 300, 3599, 43199, 43200, 2_678_401), wrongValue).map((v): Mutation => (b) => setKey(b, 'interval', v)),
  fc.oneof(
    fc.array(fc.oneof(uuid.map((channel_id) => ({ channel_id })), fc.constantFrom({}, { channel_id: 'nope' }, { channel_id: null }, { channel_id: '00000000-0000-0000-0000-000000000000', extra: 1 }), wrongValue), { maxLength: 3 }),
    uuid.map((id) => [{ channel_id: id }, { channel_id: id.toUpperCase() }]),
    wrongValue,
  ).map((v): Mutation => (b) => setKey(b, 'alerts', v)),
  fc.tuple(fc.constantFrom('alert_confirmations', 'renotify_interval_secs', 'recovery_period_secs', 'notify_recovery', 'enabled', 'group_name', 'owner_user_id', 'name'), fc.oneof(oddNumber, oddString, wrongValue, uuid))
    .map(([k, v]): Mutation => (b) => setKey(b, k, v)),
);

/** Mutations of the check: credentials set to the sentinel, junk at kind fields, another kind's fields. */
const checkMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom<Mutation>(
    (b) => withCheck(b, (c) => { c.basic_auth = ['***', '***']; }),
    (b) => withCheck(b, (c) => { c.basic_auth = ['user', '***']; }),
    (b) => withCheck(b, (c) => { c.bearer_token = '***'; }),
    (b) => withCheck(b, (c) => { c.headers = { Authorization: '***', '': 'x', 'X\u0000': 'y' }; }),
    (b) => withCheck(b, (c) => { c.url = `https://${PUBLIC_IP}/{{missing_var}}`; }),
    (b) => withCheck(b, (c) => { c.url = `https://${PUBLIC_IP}/{{fuzz_var}}`; }),
    (b) => withCheck(b, (c) => { c.steps = [{ op: 'fill', selector: '#p', value: '***' }, { op: 'assert_url', contains: 'x' }]; }),
    (b) => withCheck(b, (c) => { c.steps = [{ op: 'click', selector: '#a' }]; }),
    (b) => withCheck(b, (c) => { c.steps = Array.from({ length: 31 }, () => ({ op: 'assert_url', contains: 'x' })); }),
    (b) => withCheck(b, (c) => { c.expected_status = { kind: 'range', value: { min: 500, max: 200 } }; }),
    (b) => withCheck(b, (c) => { c.expected_status = { kind: 'one_of', value: [200, 200] }; }),
    (b) => withCheck(b, (c) => { c.warn_days = 7; c.critical_days = 30; }),
    (b) => withCheck(b, (c) => { c.type = 'ping'; c.host = PUBLIC_IP; }),
    (b) => withCheck(b, (c) => { c.ip_version = 'ipv6'; }),
    (b) => withCheck(b, (c) => { c.resolver = 'not-an-ip:99999'; }),
    (b) => withCheck(b, (c) => { c.domain = 'x'; }),
    (b) => withCheck(b, (c) => { c.domain = '-bad-.com.'; }),
    (b) => withCheck(b, (c) => { c.url = 'ftp://93.184.216.34/'; }),
    (b) => withCheck(b, (c) => { c.url = 'https://[::1/'; }),
    (b) => withCheck(b, (c) => { c.host = 'exa mple.com'; }),
    (b) => withCheck(b, (c) => { c.max_runtime = 1; }),
  ),
  fc.tuple(fc.constantFrom('type', 'url', 'host', 'port', 'domain', 'record_type', 'timeout', 'period', 'grace', 'max_runtime', 'steps', 'start_url', 'warn_days', 'critical_days', 'server_name', 'expected_status', 'headers', 'basic_auth', 'bearer_token', 'method', 'body', 'expected_records', 'resolver', 'ip_version', 'step_timeout'), fc.oneof(oddString, oddNumber, wrongValue, fc.anything()))
    .map(([k, v]): Mutation => (b) => withCheck(b, (c) => { setKey(c, k, v); })),
);
function withCheck(b: Body, edit: (check: Body) => void): Body {
  if (typeof b.check === 'object' && b.check !== null && !Array.isArray(b.check)) edit(b.check as Body);
  return b;
}

// ---------------------------------------------------------------- the properties

describe('fuzzing the target and variable bodies', () => {
  let t: TestApp;
  let api: Api;
  let token: string;
  const existing = new Map<CheckKind, string>();
  const report: Record<string, string[]> = {};

  const send = (method: 'POST' | 'PATCH', url: string, text: string) => t.inject({
    method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: text,
  });
  const targetTotal = async () => {
    const res = await api('GET', '/api/v1/targets?limit=1');
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Json).total as number;
  };
  const variableTotal = async () => {
    const res = await api('GET', '/api/v1/variables?limit=1');
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Json).total as number;
  };

  before(async () => {
    t = await startTestApp({ config: { 'security.allow_private_targets': true } });
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    token = tenant.token;
    // Thousands of requests a minute: lift the account's rate budgets so no answer is a 429.
    await overrideCaps(t, tenant.accountId, { api_writes_per_minute: 1_000_000, api_reads_per_minute: 1_000_000 });
    api = client(t, token);
    const v = await api('POST', '/api/v1/variables', { key: 'fuzz_var', value: 'v1' });
    assert.equal(v.statusCode, 201, v.body);
    for (const kind of CHECK_KINDS) {
      const body = fc.sample(validCreate(kind), { numRuns: 1, seed: 1, includeErrorInReport: true })[0]!;
      const res = await api('POST', '/api/v1/targets', { ...body, name: `existing ${kind}` });
      assert.equal(res.statusCode, 201, `${kind}: ${JSON.stringify(body)} -> ${res.body}`);
      existing.set(kind, (res.json() as Json).id as string);
    }
  });
  after(async () => {
    for (const [route, seen] of Object.entries(report)) process.stdout.write(`# ${route}: ${seen.join(', ')}\n`);
    await t.close();
  });

  it('valid bodies of every kind are accepted, so mutations start from passing requests', async () => {
    for (const kind of CHECK_KINDS) {
      await fc.assert(fc.asyncProperty(validCreate(kind), async (body) => {
        const res = await api('POST', '/api/v1/targets', body);
        assert.equal(res.statusCode, 201, `${JSON.stringify(body)} -> ${res.body}`);
        assert.equal((await api('DELETE', `/api/v1/targets/${(res.json() as Json).id}`)).statusCode, 204);
      }), { numRuns: 15, includeErrorInReport: true });
      await fc.assert(fc.asyncProperty(validPatch(kind), async (body) => {
        const res = await api('PATCH', `/api/v1/targets/${existing.get(kind)}`, body);
        assert.equal(res.statusCode, 200, `${kind} PATCH ${JSON.stringify(body)} -> ${res.body}`);
      }), { numRuns: 10, includeErrorInReport: true });
    }
  });

  it('POST /api/v1/targets: never a 5xx, errors are enveloped with a field, a rejected POST adds no row', async () => {
    const seen = new Set<string>();
    const anyKind = fc.constantFrom(...CHECK_KINDS).chain((kind) => validCreate(kind));
    await fc.assert(fc.asyncProperty(payload(anyKind, fc.oneof(fieldMutation, checkMutation)), async ({ text, sent }) => {
      const before = await targetTotal();
      const res = await send('POST', '/api/v1/targets', text);
      const what = `POST /api/v1/targets ${text.slice(0, 300)}`;
      assertEnvelope(res, what, sent);
      seen.add(outcome(res));
      if (res.statusCode < 300) {
        assert.equal(res.statusCode, 201, what);
        // Keep the account under its max_targets so later valid bodies still succeed.
        assert.equal((await api('DELETE', `/api/v1/targets/${(res.json() as Json).id}`)).statusCode, 204);
        return;
      }
      assert.equal(await targetTotal(), before, `${what}: rejected with ${res.body} but the target count changed`);
    }), { numRuns: NUM_RUNS * 2, includeErrorInReport: true });
    report['POST /api/v1/targets'] = [...seen].sort();
    assertReached(seen, 'POST /api/v1/targets');
  });

  it('PATCH /api/v1/targets/{id}: never a 5xx, errors are enveloped with a field, a rejected PATCH changes nothing', async () => {
    const seen = new Set<string>();
    const kindAndBody = fc.constantFrom(...CHECK_KINDS).chain((kind) =>
      payload(validPatch(kind), fc.oneof(fieldMutation, checkMutation)).map((p) => ({ kind, ...p })));
    await fc.assert(fc.asyncProperty(kindAndBody, async ({ kind, text, sent }) => {
      const url = `/api/v1/targets/${existing.get(kind)}`;
      const before = (await api('GET', url)).body;
      const total = await targetTotal();
      const res = await send('PATCH', url, text);
      const what = `PATCH ${kind} target ${text.slice(0, 300)}`;
      assertEnvelope(res, what, sent);
      seen.add(outcome(res));
      assert.equal(await targetTotal(), total, `${what}: the target count changed`);
      if (res.statusCode < 300) {
        assert.equal(res.statusCode, 200, what);
        assert.equal((res.json() as Json).check.type, kind, `${what}: the check kind changed`);
        return;
      }
      assert.equal((await api('GET', url)).body, before, `${what}: rejected with ${res.body} but the target changed`);
    }), { numRuns: NUM_RUNS * 2, includeErrorInReport: true });
    report['PATCH /api/v1/targets/{id}'] = [...seen].sort();
    assertReached(seen, 'PATCH /api/v1/targets/{id}');
  });

  const variableKey = fc.oneof(
    fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/),
    fc.constantFrom('fuzz_var', 'a', 'a'.repeat(63), 'a'.repeat(64), 'A', '1a', '_a', 'a-b', 'a b', 'é', 'a\u0000', '', ' a', 'a\n'),
    oddString,
  );
  const variableValue = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('', '***', '{{fuzz_var}}', 'x'.repeat(4096), 'x'.repeat(4097), '😀'.repeat(2048), '😀'.repeat(2049), 'a\u0000b', '\uD800'));
  const variableMutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.tuple(fc.constantFrom('key', 'value', 'is_secret'), fc.oneof(variableKey, variableValue, wrongValue)).map(([k, v]): Mutation => (b) => setKey(b, k, v)),
  );

  it('POST /api/v1/variables: never a 5xx, errors are enveloped with a field, a rejected POST adds no row', async () => {
    const seen = new Set<string>();
    const valid = fc.record({ key: variableKey.filter((k) => /^[a-z][a-z0-9_]{0,62}$/.test(k)), value: variableValue.filter((v) => v.length <= 4096 && !v.includes('\u0000')), is_secret: opt(fc.boolean()) }).map(compact);
    await fc.assert(fc.asyncProperty(payload(valid, variableMutation), async ({ text, sent }) => {
      const before = await variableTotal();
      const res = await send('POST', '/api/v1/variables', text);
      const what = `POST /api/v1/variables ${text.slice(0, 300)}`;
      assertEnvelope(res, what, sent);
      seen.add(outcome(res));
      if (res.statusCode < 300) { assert.equal(res.statusCode, 201, what); return; }
      assert.equal(await variableTotal(), before, `${what}: rejected with ${res.body} but the variable count changed`);
    }), { numRuns: NUM_RUNS, includeErrorInReport: true });
    report['POST /api/v1/variables'] = [...seen].sort();
    assertReached(seen, 'POST /api/v1/variables');
  });

  it('PATCH /api/v1/variables/{id}: never a 5xx, errors are enveloped with a field, a rejected PATCH changes nothing', async () => {
    const seen = new Set<string>();
    const created = await Promise.all([false, true].map(async (is_secret) => {
      const res = await api('POST', '/api/v1/variables', { key: `patched_${is_secret}`, value: 'v', is_secret });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as Json).id as string;
    }));
    const valid = fc.record({ value: variableValue.filter((v) => v.length <= 4096 && !v.includes('\u0000')) });
    await fc.assert(fc.asyncProperty(fc.constantFrom(...created), payload(valid, variableMutation), async (id, { text, sent }) => {
      const url = `/api/v1/variables/${id}`;
      const before = (await api('GET', url)).body;
      const res = await send('PATCH', url, text);
      const what = `PATCH /api/v1/variables ${text.slice(0, 300)}`;
      assertEnvelope(res, what, sent);
      seen.add(outcome(res));
      if (res.statusCode < 300) return;
      assert.equal((await api('GET', url)).body, before, `${what}: rejected with ${res.body} but the variable changed`);
    }), { numRuns: NUM_RUNS, includeErrorInReport: true });
    report['PATCH /api/v1/variables/{id}'] = [...seen].sort();
    // A rotation body is one string: nothing in it is a 422 domain rule, so a 422 is an unknown key.
    assertReached(seen, 'PATCH /api/v1/variables/{id}');
  });
});
