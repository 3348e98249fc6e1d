// Per-kind check rules at write time (monitoring-api.md, "Check specs", "Errors").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, PUBLIC_URL, type Api, type Json } from './helpers.js';

const create = (api: Api, check: Json, extra: Json = {}) => api('POST', '/api/v1/targets', { name: 'k', check, ...extra });

describe('targets: kind rules', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  it('http: scheme http or https with a host', async () => {
    expectError(await create(api, { type: 'http', url: 'ftp://93.184.216.34/' }), 400, 'VALIDATION_FAILED', 'check.url');
    expectError(await create(api, { type: 'http', url: 'not a url' }), 400, 'VALIDATION_FAILED', 'check.url');
    expectError(await create(api, { type: 'http', url: 'file:///etc/passwd' }), 400, 'VALIDATION_FAILED', 'check.url');
    assert.equal((await create(api, { type: 'http', url: 'http://93.184.216.34:8080/health' })).statusCode, 201);
  });

  it('http: an empty authority is a missing host, judged as written (http:///x is not host x), on create, PATCH and bulk', async () => {
    for (const url of ['http:///x', 'https:///x', 'https:/x', 'http:x', 'http:\\\\\\x', ' https:///x', 'https:/\t//x']) {
      const error = expectError(await create(api, { type: 'http', url }), 400, 'VALIDATION_FAILED', 'check.url');
      assert.match(error.message, /has no host/, JSON.stringify(url));
    }
    const created = (await create(api, { type: 'http', url: PUBLIC_URL })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'http', url: 'https:///93.184.216.34/' } }), 400, 'VALIDATION_FAILED', 'check.url');
    const bulk = await api('POST', '/api/v1/targets/bulk', { targets: [httpTarget(), httpTarget({}, { url: 'http:///x' })] });
    expectError(bulk, 400, 'VALIDATION_FAILED', 'targets[1].check.url');
    assert.equal((await create(api, { type: 'http', url: 'http://user@93.184.216.34:8080/x' })).statusCode, 201);
  });

  it('http and flow: a URL holding a password is 400 naming the field, pointing to basic_auth', async () => {
    const error = expectError(await create(api, { type: 'http', url: 'http://user:pw@93.184.216.34/x' }), 400, 'VALIDATION_FAILED', 'check.url');
    assert.match(error.message, /basic_auth/);
    expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: 'https://:pw@93.184.216.34/' }), 400, 'VALIDATION_FAILED', 'url');
    const flow = { type: 'flow', start_url: 'https://u:p@93.184.216.34/', steps: [{ op: 'assert_url', contains: 'x' }] };
    expectError(await create(api, flow), 400, 'VALIDATION_FAILED', 'check.start_url');
  });

  it('flow: start_url and goto URLs follow the http host rule; a goto path has exactly one leading slash', async () => {
    const assertStep = { op: 'assert_url', contains: 'x' };
    const flow = (start_url: string, steps: Json[] = []) => ({ type: 'flow', start_url, steps: [...steps, assertStep] });
    expectError(await create(api, flow('https:///x')), 400, 'VALIDATION_FAILED', 'check.start_url');
    for (const url of ['https:///x', '///x', '//93.184.216.34/', '/\\93.184.216.34/']) {
      expectError(await create(api, flow(PUBLIC_URL, [{ op: 'goto', url }])), 400, 'VALIDATION_FAILED', 'check.steps[0].url');
    }
  });

  it('http: an expected_status range with min above max is 400 naming check.expected_status.value.min (create, PATCH, bulk)', async () => {
    const backwards = { expected_status: { kind: 'range', value: { min: 500, max: 200 } } };
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, ...backwards }), 400, 'VALIDATION_FAILED', 'check.expected_status.value.min');
    const created = (await create(api, { type: 'http', url: PUBLIC_URL })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'http', url: PUBLIC_URL, ...backwards } }), 400, 'VALIDATION_FAILED', 'check.expected_status.value.min');
    expectError(await api('POST', '/api/v1/targets/bulk', { targets: [httpTarget({}, backwards)] }), 400, 'VALIDATION_FAILED', 'targets[0].check.expected_status.value.min');
    const single = { expected_status: { kind: 'range', value: { min: 204, max: 204 } } };
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, ...single })).statusCode, 201);
  });

  it('http: a header name that is not an HTTP token or a value with CR, LF or NUL is 400 naming check.headers.<name>', async () => {
    const bad: Array<[Json, string]> = [
      [{ 'X Bad': 'v' }, 'X Bad'], [{ 'X:Bad': 'v' }, 'X:Bad'], [{ '': 'v' }, ''],
      [{ 'X-Ok': 'a\r\nInjected: 1' }, 'X-Ok'], [{ 'X-Ok': 'a\nb' }, 'X-Ok'], [{ 'X-Ok': 'a\u0000b' }, 'X-Ok'],
    ];
    const created = (await create(api, { type: 'http', url: PUBLIC_URL })).json() as Json;
    for (const [headers, name] of bad) {
      expectError(await create(api, { type: 'http', url: PUBLIC_URL, headers }), 400, 'VALIDATION_FAILED', `check.headers.${name}`);
      expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'http', url: PUBLIC_URL, headers } }), 400, 'VALIDATION_FAILED', `check.headers.${name}`);
      expectError(await api('POST', '/api/v1/targets/bulk', { targets: [httpTarget(), httpTarget({}, { headers })] }), 400, 'VALIDATION_FAILED', `targets[1].check.headers.${name}`);
      const tested = expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: PUBLIC_URL, headers }), 400, 'VALIDATION_FAILED', `headers.${name}`);
      assert.ok(tested.message.startsWith(`headers.${name}`), tested.message);
    }
    const ok = await create(api, { type: 'http', url: PUBLIC_URL, headers: { "X-Team_1.~!#$%&'*+^`|": 'tab\tand é', Empty: '' } });
    assert.equal(ok.statusCode, 201, ok.body);
  });

  it('http: at most 100 headers, names at most 256 characters; the framing headers are the client\'s own', async () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-h${i}`, 'v']));
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, headers: many }), 400, 'VALIDATION_FAILED', 'check.headers');
    const long = expectError(await create(api, { type: 'http', url: PUBLIC_URL, headers: { ['x'.repeat(257)]: 'v' } }), 400, 'VALIDATION_FAILED', 'check.headers');
    assert.match(long.message, /has a key "x+" longer than 256 characters/);
    for (const name of ['Content-Length', 'transfer-encoding', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer']) {
      expectError(await create(api, { type: 'http', url: PUBLIC_URL, headers: { [name]: '5' } }), 400, 'VALIDATION_FAILED', `check.headers.${name}`);
    }
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h${i}`, 'v']));
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, headers: { ...hundred } })).statusCode, 201);
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, headers: { Host: 'intranet.example', ['x'.repeat(256)]: 'v' } })).statusCode, 201, 'a virtual host may be named');
  });

  it('http: verify_tls false with credentials over https is 400; over http it is accepted', async () => {
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, verify_tls: false, bearer_token: 't' }), 400, 'VALIDATION_FAILED', 'check.verify_tls');
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, verify_tls: false, basic_auth: ['u', 'p'] }), 400, 'VALIDATION_FAILED', 'check.verify_tls');
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, verify_tls: false })).statusCode, 201);
    assert.equal((await create(api, { type: 'http', url: 'http://93.184.216.34/', verify_tls: false, bearer_token: 't' })).statusCode, 201);
  });

  it('http: a URL with port 0 is 400 naming check.url; a bearer_token that cannot be a header value is 400 naming it', async () => {
    expectError(await create(api, { type: 'http', url: 'https://93.184.216.34:0/' }), 400, 'VALIDATION_FAILED', 'check.url');
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, bearer_token: 'tok\n123' }), 400, 'VALIDATION_FAILED', 'check.bearer_token');
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, bearer_token: 'tok 123' })).statusCode, 201);
  });

  it('http: a basic_auth user holding a colon is 400 (RFC 7617: the user ends at the first colon); a password may hold one', async () => {
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, basic_auth: ['a:b', 'p'] }), 400, 'VALIDATION_FAILED', 'check.basic_auth');
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, basic_auth: ['a', 'p:q'] })).statusCode, 201);
  });

  it('ip_version against an IP-literal host of the other family is INVALID_IP_VERSION (http, tcp, tls_cert)', async () => {
    expectError(await create(api, { type: 'http', url: PUBLIC_URL, ip_version: 'ipv6' }), 400, 'INVALID_IP_VERSION', 'check.ip_version');
    expectError(await create(api, { type: 'http', url: 'https://[2606:2800:220:1::1]/', ip_version: 'ipv4' }), 400, 'INVALID_IP_VERSION', 'check.ip_version');
    // An IPv4-mapped literal is IPv4 traffic: pinned to ipv6 it clashes, to ipv4 it does not.
    expectError(await create(api, { type: 'http', url: 'https://[::ffff:93.184.216.34]/', ip_version: 'ipv6' }), 400, 'INVALID_IP_VERSION', 'check.ip_version');
    assert.equal((await create(api, { type: 'http', url: 'https://[::ffff:93.184.216.34]/', ip_version: 'ipv4' })).statusCode, 201);
    expectError(await create(api, { type: 'tcp', host: '93.184.216.34', port: 22, ip_version: 'ipv6' }), 400, 'INVALID_IP_VERSION', 'check.ip_version');
    expectError(await create(api, { type: 'tls_cert', host: '2606:2800:220:1::1', ip_version: 'ipv4' }), 400, 'INVALID_IP_VERSION', 'check.ip_version');
    assert.equal((await create(api, { type: 'http', url: PUBLIC_URL, ip_version: 'ipv4' })).statusCode, 201);
    assert.equal((await create(api, { type: 'tcp', host: '2606:2800:220:1::1', port: 443, ip_version: 'ipv6' })).statusCode, 201);
  });

  it('tcp and tls_cert need a host; port 0 is refused', async () => {
    expectError(await create(api, { type: 'tcp', host: '   ', port: 22 }), 400, 'VALIDATION_FAILED', 'check.host');
    expectError(await create(api, { type: 'tls_cert', host: ' ' }), 400, 'VALIDATION_FAILED', 'check.host');
    expectError(await create(api, { type: 'tcp', host: '93.184.216.34', port: 0 }), 400, 'VALIDATION_FAILED', 'check.port');
  });

  it('address fields are stored trimmed, as a dns domain is', async () => {
    const tcp = (await create(api, { type: 'tcp', host: ' 93.184.216.34\t', port: 22 })).json() as Json;
    assert.equal(tcp.check.host, '93.184.216.34');
    const http = (await create(api, { type: 'http', url: `  ${PUBLIC_URL}  ` })).json() as Json;
    assert.equal(http.check.url, PUBLIC_URL);
    const patched = (await api('PATCH', `/api/v1/targets/${tcp.id}`, { check: { type: 'tcp', host: ' 93.184.216.35 ', port: 22 } })).json() as Json;
    assert.equal(patched.check.host, '93.184.216.35');
  });

  it('a host no name could be is refused in every host field, a {{variable}} included (hosts take no references)', async () => {
    for (const host of ['{{h}}', 'ex!ample.com', '*.example.com', 'a{b}.com']) {
      expectError(await create(api, { type: 'tcp', host, port: 22 }), 400, 'VALIDATION_FAILED', 'check.host');
      expectError(await create(api, { type: 'ping', host }), 400, 'VALIDATION_FAILED', 'check.host');
      expectError(await create(api, { type: 'tls_cert', host }), 400, 'VALIDATION_FAILED', 'check.host');
      // A URL may reference variables (an unknown one is 422 UNRESOLVED_VARIABLE); its host is judged once filled in.
      if (!host.includes('{{')) expectError(await create(api, { type: 'http', url: `https://${host}/` }), 400, 'VALIDATION_FAILED', 'check.url');
    }
  });

  it('tls_cert: server_name is a host name, never an address', async () => {
    for (const server_name of ['bad name!', '93.184.216.34', '2606:2800:220:1::1', 'a..b', ' ']) {
      expectError(await create(api, { type: 'tls_cert', host: '93.184.216.34', server_name }), 400, 'VALIDATION_FAILED', 'check.server_name');
    }
    for (const server_name of ['example.com', 'WWW.Example.com', 'localhost', 'bücher.de', '_acme.example.com']) {
      assert.equal((await create(api, { type: 'tls_cert', host: '93.184.216.34', server_name })).statusCode, 201, server_name);
    }
  });

  it('tls_cert and domain_expiry: warn_days must exceed critical_days', async () => {
    expectError(await create(api, { type: 'tls_cert', host: '93.184.216.34', warn_days: 7, critical_days: 7 }), 400, 'VALIDATION_FAILED', 'check.warn_days');
    expectError(await create(api, { type: 'domain_expiry', domain: 'example.com', warn_days: 5, critical_days: 10 }), 400, 'VALIDATION_FAILED', 'check.warn_days');
    expectError(await create(api, { type: 'domain_expiry', domain: 'example.com', warn_days: 366 }), 400, 'VALIDATION_FAILED', 'check.warn_days');
    assert.equal((await create(api, { type: 'tls_cert', host: '93.184.216.34', warn_days: 8, critical_days: 7 })).statusCode, 201);
  });

  it('domain_expiry: the domain has the form name.tld', async () => {
    for (const domain of ['localhost', 'example..com', '.example.com', 'example.com.', 'exa mple.com']) {
      expectError(await create(api, { type: 'domain_expiry', domain }), 400, 'VALIDATION_FAILED', 'check.domain');
    }
    const ok = (await create(api, { type: 'domain_expiry', domain: 'example.com' })).json() as Json;
    assert.equal(ok.interval, 86400);
    const spaced = (await create(api, { type: 'domain_expiry', domain: ' Shop.EXAMPLE.com ' })).json() as Json;
    assert.equal(spaced.check.domain, 'shop.example.com', 'stored trimmed and lower case, as dns stores a name');
    const idn = (await create(api, { type: 'domain_expiry', domain: 'Bücher.com' })).json() as Json;
    assert.equal(idn.check.domain, 'xn--bcher-kva.com');
  });

  it('domain_expiry: a TLD whose registry publishes no expiry data is refused (RDAP bootstrap, local copy)', async () => {
    for (const domain of ['example.de', 'example.broken']) {
      const error = expectError(await create(api, { type: 'domain_expiry', domain }), 400, 'VALIDATION_FAILED', 'check.domain');
      assert.match(error.message, /publishes no expiry data/);
    }
    for (const domain of ['example.co.uk', 'shop.co.example', 'пример.рф', 'EXAMPLE.ORG']) {
      assert.equal((await create(api, { type: 'domain_expiry', domain })).statusCode, 201, domain);
    }
    const made = (await create(api, { type: 'domain_expiry', domain: 'example.com' })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${made.id}`, { check: { type: 'domain_expiry', domain: 'example.de' } }), 400, 'VALIDATION_FAILED', 'check.domain');
  });

  it('domain_expiry: an unreachable bootstrap registry does not block writes (fail open)', async () => {
    const offline = await startTestApp({ config: { 'checker.rdap_bootstrap_url': 'file:///nonexistent/rdap-dns.json' } });
    try {
      const other = await createTenantWithToken(offline, { plan: 'team' });
      assert.equal((await create(client(offline, other.token), { type: 'domain_expiry', domain: 'example.de' })).statusCode, 201);
    } finally {
      await offline.close();
    }
  });

  it('heartbeat: period 60 s to 30 d, grace 0 to 30 d, max_runtime 60 s to 30 d (ms), each refused by name outside', async () => {
    const DAY = 86_400_000;
    const edges = { type: 'heartbeat', period: 60_000, grace: 0, max_runtime: 60_000 };
    assert.equal((await create(api, edges)).statusCode, 201);
    assert.equal((await create(api, { type: 'heartbeat', period: 30 * DAY, grace: 30 * DAY, max_runtime: 30 * DAY })).statusCode, 201);
    const outside: Array<[Json, string]> = [
      [{ period: 59_999 }, 'check.period'], [{ period: 30 * DAY + 1 }, 'check.period'], [{ period: 60_000.5 }, 'check.period'],
      [{ grace: -1 }, 'check.grace'], [{ grace: 30 * DAY + 1 }, 'check.grace'],
      [{ max_runtime: 59_999 }, 'check.max_runtime'], [{ max_runtime: 30 * DAY + 1 }, 'check.max_runtime'],
    ];
    for (const [change, field] of outside) {
      expectError(await create(api, { ...edges, ...change }), 400, 'VALIDATION_FAILED', field);
    }
    const made = (await create(api, edges)).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${made.id}`, { check: { type: 'heartbeat', period: 59_999 } }), 400, 'VALIDATION_FAILED', 'check.period');
  });

  it('heartbeat and manual refuse regions', async () => {
    expectError(await create(api, { type: 'heartbeat' }, { regions: ['local'] }), 422, 'REGION_INVALID', 'regions');
    expectError(await create(api, { type: 'manual' }, { regions: ['local'] }), 422, 'REGION_INVALID', 'regions');
    const hb = (await create(api, { type: 'heartbeat' })).json() as Json;
    assert.deepEqual(hb.regions, []);
    expectError(await api('PUT', `/api/v1/targets/${hb.id}/regions`, { regions: ['local'] }), 422, 'REGION_INVALID', 'regions');
    expectError(await api('PATCH', `/api/v1/targets/${hb.id}`, { regions: ['local'] }), 422, 'REGION_INVALID', 'regions');
    const bulk = await api('POST', '/api/v1/targets/bulk', { targets: [{ name: 'a', check: { type: 'http', url: 'https://example.com/' } }, { name: 'b', check: { type: 'heartbeat' }, regions: ['local'] }] });
    expectError(bulk, 422, 'REGION_INVALID', 'targets[1].regions');
  });

  it('manual: one confirmation, recovery 0, interval exactly 60', async () => {
    const manual = (await create(api, { type: 'manual' }, { alert_confirmations: 5 })).json() as Json;
    assert.deepEqual([manual.alert_confirmations, manual.recovery_period_secs, manual.interval], [1, 0, 60]);
    expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { alert_confirmations: 2 }), 400, 'INVALID_ALERT_CONFIG', 'alert_confirmations');
    expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { recovery_period_secs: 30 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
    expectError(await create(api, { type: 'manual' }, { recovery_period_secs: 60 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
    expectError(await create(api, { type: 'manual' }, { interval: 120 }), 400, 'INVALID_INTERVAL', 'interval');
    expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { interval: 30 }), 400, 'INVALID_INTERVAL', 'interval');
    // Any value but 60, also those the interval's schema would refuse first for other kinds.
    for (const interval of [60.5, 3_000_000, '60', null]) {
      expectError(await create(api, { type: 'manual' }, { interval }), 400, 'INVALID_INTERVAL', 'interval');
      expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { interval }), 400, 'INVALID_INTERVAL', 'interval');
    }
    const http = (await create(api, { type: 'http', url: 'https://example.com/' })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${http.id}`, { interval: 60.5 }), 400, 'VALIDATION_FAILED', 'interval');
    assert.equal((await api('PATCH', `/api/v1/targets/${manual.id}`, { interval: 60, alert_confirmations: 1 })).statusCode, 200);
    // The same rules through bulk create and duplicate.
    const bulk = await api('POST', '/api/v1/targets/bulk', { targets: [{ name: 'm1', check: { type: 'manual' }, alert_confirmations: 4 }] });
    assert.equal(bulk.statusCode, 201, bulk.body);
    assert.deepEqual([bulk.json().targets[0].alert_confirmations, bulk.json().targets[0].interval], [1, 60]);
    expectError(await api('POST', '/api/v1/targets/bulk', { targets: [{ name: 'm2', check: { type: 'manual' }, interval: 300 }] }), 400, 'INVALID_INTERVAL', 'targets[0].interval');
    const copy = await api('POST', `/api/v1/targets/${manual.id}/duplicate`, { copies: [{ name: 'm copy' }] });
    assert.equal(copy.statusCode, 201, copy.body);
    assert.deepEqual([copy.json().targets[0].alert_confirmations, copy.json().targets[0].recovery_period_secs, copy.json().targets[0].interval], [1, 0, 60]);
  });

  it('flow: at least one assert step; steps within the plan', async () => {
    const flow = (steps: Json[]) => ({ type: 'flow', start_url: PUBLIC_URL, steps });
    expectError(await create(api, flow([{ op: 'click', selector: '#a' }])), 400, 'VALIDATION_FAILED', 'check.steps');
    expectError(await create(api, { type: 'flow', start_url: 'ftp://x.example/', steps: [{ op: 'assert_url', contains: 'x' }] }), 400, 'VALIDATION_FAILED', 'check.start_url');
    expectError(await create(api, flow([{ op: 'goto', url: 'gopher://93.184.216.34/' }, { op: 'assert_url', contains: 'x' }])), 400, 'VALIDATION_FAILED', 'check.steps[0].url');
    const created = (await create(api, flow([{ op: 'goto', url: '/login' }, { op: 'assert_text', contains: 'Hi' }]))).json() as Json;
    assert.equal(created.interval, 300);
    assert.equal(created.recovery_period_secs, 180);
    await overrideCaps(t, tenant.accountId, { max_flow_steps: 2 });
    const third = await create(api, flow([{ op: 'click', selector: 'a' }, { op: 'click', selector: 'b' }, { op: 'assert_url', contains: 'x' }]));
    expectError(third, 400, 'INVALID_FLOW_PARAMS', 'check.steps');
  });

  it('flow: a plan whose max_flow_checks is 0 is 403 FLOW_CHECKS_DISABLED', async () => {
    const free = client(t, (await createTenantWithToken(t, { plan: 'free' })).token);
    expectError(await create(free, { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: 'x' }] }), 403, 'FLOW_CHECKS_DISABLED');
    assert.equal((await create(free, httpTarget().check, { interval: 180 })).statusCode, 201);
  });

  it('PATCH: a check of another type is CHECK_KIND_IMMUTABLE; a check of the same type replaces it', async () => {
    const created = (await create(api, { type: 'http', url: PUBLIC_URL })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'tcp', host: '93.184.216.34', port: 80 } }), 400, 'CHECK_KIND_IMMUTABLE', 'check.type');
    const patched = (await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'http', url: 'http://93.184.216.34/x', method: 'HEAD' } })).json() as Json;
    assert.equal(patched.check.url, 'http://93.184.216.34/x');
    assert.equal(patched.check.method, 'HEAD');
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'http', url: 'ftp://x/' } }), 400, 'VALIDATION_FAILED', 'check.url');
  });

  it('PATCH: another kind answers CHECK_KIND_IMMUTABLE before its own shape is judged; a foreign or unknown id stays 404', async () => {
    const created = (await create(api, { type: 'http', url: PUBLIC_URL })).json() as Json;
    const url = `/api/v1/targets/${created.id}`;
    for (const check of [{ type: 'tcp' }, { type: 'heartbeat', period: 1 }, { type: 'manual' }, { type: 'smtp' }]) {
      expectError(await api('PATCH', url, { check }), 400, 'CHECK_KIND_IMMUTABLE', 'check.type');
    }
    const manual = (await create(api, { type: 'manual' })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { check: { type: 'http' } }), 400, 'CHECK_KIND_IMMUTABLE', 'check.type');
    // The same kind, incomplete, is judged by its shape; a type that is not a string is the schema's.
    expectError(await api('PATCH', url, { check: { type: 'http' } }), 400, 'VALIDATION_FAILED', 'check.url');
    expectError(await api('PATCH', url, { check: { type: 7 } }), 400, 'VALIDATION_FAILED', 'check.type');
    const other = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    expectError(await other('PATCH', url, { check: { type: 'tcp' } }), 404, 'NOT_FOUND');
    expectError(await api('PATCH', '/api/v1/targets/0190a0a0-0000-7000-8000-000000000000', { check: { type: 'tcp' } }), 404, 'NOT_FOUND');
    expectError(await api('PATCH', '/api/v1/targets/not-a-uuid', { check: { type: 'tcp' } }), 404, 'NOT_FOUND');
    assert.deepEqual((await api('GET', url)).json(), created);
  });

  it('an unknown or read-only key wins over the rules judged before the body\'s schema (kind fixed, manual interval); a foreign id stays 404', async () => {
    const http = (await create(api, { type: 'http', url: PUBLIC_URL })).json() as Json;
    const manual = (await create(api, { type: 'manual' })).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${http.id}`, { check: { type: 'tcp', host: '93.184.216.34', port: 80 }, bogus: 1 }), 422, 'INVALID_JSON', 'bogus');
    expectError(await api('PATCH', `/api/v1/targets/${http.id}`, { check: { type: 'manual', extra: 1 } }), 422, 'INVALID_JSON', 'check.extra');
    // No kind named: a key no kind accepts is still the unknown key, not the missing `type`.
    expectError(await api('POST', '/api/v1/targets', { name: 'x', check: { foo: 1 } }), 422, 'INVALID_JSON', 'check.foo');
    expectError(await api('POST', '/api/v1/targets/test', { name: 'x', check: { type: 'http', url: PUBLIC_URL } }), 422, 'INVALID_JSON', 'name');
    expectError(await api('POST', '/api/v1/targets', { name: 'x', check: { url: PUBLIC_URL } }), 400, 'VALIDATION_FAILED', 'check.type');
    expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { interval: 120, bogus: 1 }), 422, 'INVALID_JSON', 'bogus');
    expectError(await api('PATCH', `/api/v1/targets/${manual.id}`, { interval: 120, write_source: 'api' }), 422, 'INVALID_JSON', 'write_source');
    for (const extra of [{ write_source: 'api' }, { id: 'x' }, { bogus: 1 }]) {
      const res = await create(api, { type: 'manual' }, { interval: 120, ...extra });
      expectError(res, 422, 'INVALID_JSON', Object.keys(extra)[0]);
      assert.ok(Array.isArray(res.json().error.allowed), 'with the keys the body accepts');
    }
    const other = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    expectError(await other('PATCH', `/api/v1/targets/${http.id}`, { check: { type: 'tcp' }, bogus: 1 }), 404, 'NOT_FOUND');
    assert.deepEqual((await api('GET', `/api/v1/targets/${manual.id}`)).json(), manual);
  });

  it('flow: more than 30 steps is INVALID_FLOW_PARAMS whatever the plan says', async () => {
    const steps = Array.from({ length: 31 }, () => ({ op: 'assert_url', contains: 'x' }));
    const fresh = await createTenantWithToken(t, { plan: 'team' });
    const own = client(t, fresh.token);
    expectError(await create(own, { type: 'flow', start_url: PUBLIC_URL, steps }), 400, 'INVALID_FLOW_PARAMS', 'check.steps');
    await overrideCaps(t, fresh.accountId, { max_flow_steps: 100 });
    expectError(await create(own, { type: 'flow', start_url: PUBLIC_URL, steps }), 400, 'INVALID_FLOW_PARAMS', 'check.steps');
    assert.equal((await create(own, { type: 'flow', start_url: PUBLIC_URL, steps: steps.slice(1) })).statusCode, 201);
  });
});
