// Write-time SSRF guard and deny-lists on every host a check reaches; `{{key}}` variable references.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, PUBLIC_URL, type Api, type Json } from './helpers.js';

const steps = (url: string) => [{ op: 'goto', url }, { op: 'assert_url', contains: 'x' }];

describe('targets: SSRF guard and deny-lists at write time', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  let api: Api;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kw-deny-'));
    writeFileSync(join(dir, 'urls.txt'), '/wp-admin\n');
    writeFileSync(join(dir, 'domains.txt'), 'evil.example\n');
    t = await startTestApp({ config: { 'abuse.url_patterns_file': join(dir, 'urls.txt'), 'abuse.domain_denylist_file': join(dir, 'domains.txt') } });
    a = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, a.token);
  });
  after(async () => { await t.close(); });

  it('refuses blocked addresses in every host field', async () => {
    const cases: Array<[Json, string]> = [
      [{ type: 'http', url: 'http://127.0.0.1/' }, 'check.url'],
      [{ type: 'http', url: 'http://[::ffff:10.0.0.1]/' }, 'check.url'],
      [{ type: 'http', url: 'http://localhost:8080/' }, 'check.url'],
      [{ type: 'tcp', host: '192.168.1.1', port: 22 }, 'check.host'],
      [{ type: 'ping', host: '169.254.169.254' }, 'check.host'],
      [{ type: 'tls_cert', host: '100.64.0.1' }, 'check.host'],
      [{ type: 'flow', start_url: 'http://10.1.2.3/', steps: steps('/a') }, 'check.start_url'],
      [{ type: 'flow', start_url: PUBLIC_URL, steps: steps('http://0.0.0.0/') }, 'check.steps[0].url'],
      [{ type: 'dns', domain: 'example.com', record_type: 'A', resolver: '127.0.0.1:5353' }, 'check.resolver'],
      [{ type: 'dns', domain: 'example.com', record_type: 'A', resolver: '[fd00::53]' }, 'check.resolver'],
    ];
    for (const [check, field] of cases) expectError(await api('POST', '/api/v1/targets', { name: 'x', check }), 400, 'VALIDATION_FAILED', field);
    const created = (await api('POST', '/api/v1/targets', httpTarget())).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { check: { type: 'http', url: 'http://10.0.0.1/' } }), 400, 'VALIDATION_FAILED', 'check.url');
  });

  it('refuses deny-listed URLs and domains and records abuse_blocked events', async () => {
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://93.184.216.34/wp-admin/install.php' })), 400, 'URL_PATTERN_BLOCKED', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://www.evil.example/' })), 400, 'DOMAIN_DENYLISTED', 'check.url');
    expectError(await api('POST', '/api/v1/targets', { name: 'x', check: { type: 'tcp', host: 'evil.example', port: 22 } }), 400, 'DOMAIN_DENYLISTED', 'check.host');
    expectError(await api('POST', '/api/v1/targets', { name: 'x', check: { type: 'domain_expiry', domain: 'evil.example' } }), 400, 'DOMAIN_DENYLISTED', 'check.domain');
    expectError(await api('POST', '/api/v1/targets', { name: 'x', check: { type: 'dns', domain: 'a.evil.example.', record_type: 'A' } }), 400, 'DOMAIN_DENYLISTED', 'check.domain');
    expectError(await api('POST', '/api/v1/targets', { name: 'x', check: { type: 'flow', start_url: PUBLIC_URL, steps: steps('https://93.184.216.34/wp-admin') } }), 400, 'URL_PATTERN_BLOCKED', 'check.steps[0].url');
    await t.services.quotaEvents.flush();
    const [row] = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM quota_events WHERE event = 'abuse_blocked' AND account_id = $1 AND user_id = $2`, [a.accountId, a.userId]);
    assert.equal(row!.n, 6);
  });

  it('POST /targets/test refuses what a create refuses: blocked ranges and deny-lists', async () => {
    expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: 'http://10.0.0.1/' }), 400, 'VALIDATION_FAILED', 'url');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'tcp', host: '169.254.169.254', port: 80 }), 400, 'VALIDATION_FAILED', 'host');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: 'https://93.184.216.34/wp-admin/' }), 400, 'URL_PATTERN_BLOCKED', 'url');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'tls_cert', host: 'www.evil.example' }), 400, 'DOMAIN_DENYLISTED', 'host');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'domain_expiry', domain: 'evil.example' }), 400, 'DOMAIN_DENYLISTED', 'domain');
  });

  it('allow_private_targets lets private addresses through', async () => {
    const open = await startTestApp({ config: { 'security.allow_private_targets': true } });
    try {
      const openApi = client(open, (await createTenantWithToken(open, { plan: 'team' })).token);
      assert.equal((await openApi('POST', '/api/v1/targets', httpTarget({}, { url: 'http://127.0.0.1:9/' }))).statusCode, 201);
      assert.equal((await openApi('POST', '/api/v1/targets', { name: 'x', check: { type: 'tcp', host: '10.0.0.1', port: 5432 } })).statusCode, 201);
      await openApi('POST', '/api/v1/variables', { key: 'lo', value: '127.0.0.1' });
      assert.equal((await openApi('POST', '/api/v1/targets', httpTarget({}, { url: 'http://{{lo}}:9/' }))).statusCode, 201);
    } finally {
      await open.close();
    }
  });

  it('a deny-listed URL is refused when a variable supplies it', async () => {
    await api('POST', '/api/v1/variables', { key: 'evil', value: 'https://www.evil.example' });
    await api('POST', '/api/v1/variables', { key: 'path', value: 'wp-admin' });
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: '{{evil}}/' })), 400, 'DOMAIN_DENYLISTED', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: `${PUBLIC_URL}{{path}}/` })), 400, 'URL_PATTERN_BLOCKED', 'check.url');
  });

  it('a rotation that would send a monitor\'s URL somewhere no update could is refused, and nothing changes', async () => {
    const host = (await api('POST', '/api/v1/variables', { key: 'site', value: 'example.com' })).json() as Json;
    const page = (await api('POST', '/api/v1/variables', { key: 'page', value: 'status' })).json() as Json;
    const monitor = (await api('POST', '/api/v1/targets', httpTarget({ name: 'templated' }, { url: 'https://{{site}}/{{page}}' }))).json() as Json;
    assert.ok(monitor.id, JSON.stringify(monitor));
    const refusals: Array<[string, string, string]> = [
      [host.id as string, 'www.evil.example', 'DOMAIN_DENYLISTED'],
      [host.id as string, '10.0.0.1', 'VALIDATION_FAILED'],
      [host.id as string, 'exa mple.com', 'VALIDATION_FAILED'],
      [page.id as string, 'wp-admin/install.php', 'URL_PATTERN_BLOCKED'],
    ];
    for (const [id, value, code] of refusals) {
      const res = await api('PATCH', `/api/v1/variables/${id}`, { value });
      expectError(res, 400, code, 'value');
      assert.match((res.json() as { error: { message: string } }).error.message, new RegExp(`monitor "templated" \\(${monitor.id}\\)`), res.body);
    }
    assert.equal(((await api('GET', `/api/v1/variables/${host.id}`)).json() as Json).value, 'example.com', 'a refused rotation changes nothing');
    assert.equal(((await api('GET', `/api/v1/variables/${page.id}`)).json() as Json).value, 'status');
    assert.equal((await api('PATCH', `/api/v1/variables/${host.id}`, { value: 'example.org' })).statusCode, 200, 'an allowed value rotates');
    // A variable only a header uses never fills a URL: any value rotates.
    const header = (await api('POST', '/api/v1/variables', { key: 'hv', value: 'a' })).json() as Json;
    assert.equal((await api('POST', '/api/v1/targets', httpTarget({ name: 'header' }, { headers: { 'X-K': '{{hv}}' } }))).statusCode, 201);
    assert.equal((await api('PATCH', `/api/v1/variables/${header.id}`, { value: 'www.evil.example' })).statusCode, 200);
  });
});

describe('targets: variable references', () => {
  let t: TestApp;
  let api: Api;
  before(async () => {
    t = await startTestApp();
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    await api('POST', '/api/v1/variables', { key: 'host', value: 'example.com' });
    await api('POST', '/api/v1/variables', { key: 'token', is_secret: true, value: 's3cret' });
  });
  after(async () => { await t.close(); });

  it('resolves references; secrets only in header values, the body and fill values', async () => {
    const ok = await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://{{host}}/health', headers: { Authorization: 'Bearer {{ token }}' }, body: '{"t":"{{token}}"}', method: 'POST' }));
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal((ok.json() as Json).check.url, 'https://{{host}}/health');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://{{nope}}/' })), 422, 'UNRESOLVED_VARIABLE', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://93.184.216.34/?k={{token}}' })), 422, 'UNRESOLVED_VARIABLE', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { expected_body_contains: '{{token}}' })), 422, 'UNRESOLVED_VARIABLE', 'check.expected_body_contains');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { headers: { 'X-A': '{{missing}}' } })), 422, 'UNRESOLVED_VARIABLE', 'check.headers.X-A');
    const flow = await api('POST', '/api/v1/targets', { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'fill', selector: '#p', value: '{{token}}' }, { op: 'assert_url', contains: 'x' }] } });
    assert.equal(flow.statusCode, 201, flow.body);
  });

  it('a URL whose scheme and host come from a variable is judged with its current value; the reference is stored', async () => {
    await api('POST', '/api/v1/variables', { key: 'base', value: 'https://93.184.216.34' });
    await api('POST', '/api/v1/variables', { key: 'lo', value: '127.0.0.1' });
    await api('POST', '/api/v1/variables', { key: 'ftp', value: 'ftp://93.184.216.34' });
    await api('POST', '/api/v1/variables', { key: 'v4', value: '93.184.216.34' });
    await api('POST', '/api/v1/variables', { key: 'secret_base', is_secret: true, value: 'https://93.184.216.34' });
    const ok = await api('POST', '/api/v1/targets', httpTarget({}, { url: '{{base}}/health' }));
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal((ok.json() as Json).check.url, '{{base}}/health');
    const patched = await api('PATCH', `/api/v1/targets/${(ok.json() as Json).id}`, { check: { type: 'http', url: '{{ base }}/v2' } });
    assert.equal(patched.statusCode, 200, patched.body);
    const bulk = await api('POST', '/api/v1/targets/bulk', { targets: [httpTarget({}, { url: '{{base}}/a' }), httpTarget({}, { url: 'https://{{v4}}/b' })] });
    assert.equal(bulk.statusCode, 201, bulk.body);
    // A host from a variable is refused in a blocked range like a literal one, with the same answer.
    const literal = expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://127.0.0.1/x' })), 400, 'VALIDATION_FAILED', 'check.url');
    const viaVariable = expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://{{lo}}/x' })), 400, 'VALIDATION_FAILED', 'check.url');
    assert.equal(viaVariable.message, literal.message);
    expectError(await api('PATCH', `/api/v1/targets/${(ok.json() as Json).id}`, { check: { type: 'http', url: 'http://{{lo}}:8080/' } }), 400, 'VALIDATION_FAILED', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: '{{ftp}}/x' })), 400, 'VALIDATION_FAILED', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: 'https://{{v4}}/', ip_version: 'ipv6' })), 400, 'INVALID_IP_VERSION', 'check.ip_version');
    // An unknown key or a secret is UNRESOLVED_VARIABLE, before the URL's form is judged.
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: '{{nope}}/health' })), 422, 'UNRESOLVED_VARIABLE', 'check.url');
    expectError(await api('POST', '/api/v1/targets', httpTarget({}, { url: '{{secret_base}}/health' })), 422, 'UNRESOLVED_VARIABLE', 'check.url');
  });

  it('counts used_by and refuses deleting a referenced variable', async () => {
    const vars = ((await api('GET', '/api/v1/variables')).json() as Json).variables as Json[];
    const byKey = Object.fromEntries(vars.map((v) => [v.key, v]));
    assert.equal(byKey.host.used_by, 1);
    assert.equal(byKey.token.used_by, 2);
    expectError(await api('DELETE', `/api/v1/variables/${byKey.host.id}`), 409, 'VARIABLE_IN_USE');
    const targets = ((await api('GET', '/api/v1/targets')).json() as Json).targets as Json[];
    const user = targets.find((x) => x.check.url === 'https://{{host}}/health')!;
    await api('PATCH', `/api/v1/targets/${user.id}`, { check: { type: 'http', url: PUBLIC_URL } });
    assert.equal(((await api('GET', `/api/v1/variables/${byKey.host.id}`)).json() as Json).used_by, 0);
    assert.equal((await api('DELETE', `/api/v1/variables/${byKey.host.id}`)).statusCode, 204);
  });
});
