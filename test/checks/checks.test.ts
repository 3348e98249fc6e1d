// One-shot checks and results over HTTP (monitoring-api.md endpoints `targets/test`,
// `targets/{id}/check-now`, `targets/{id}/results`): against a real HTTP server on 127.0.0.1.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { sealerFor } from '../../src/shared/seal.js';
import { client, expectError, overrideCaps, type Api, type Json } from '../targets/helpers.js';

describe('test, check-now and results', () => {
  let t: TestApp;
  let server: Server;
  let base: string;
  let tenant: Tenant & { token: string };
  let api: Api;
  const seen: Array<{ url: string; headers: IncomingMessage['headers']; body?: string }> = [];
  let bounceTo = '';

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers });
      if (req.url === '/down') { res.writeHead(500); res.end(); return; }
      if (req.url === '/bounce') { res.writeHead(302, { location: `${bounceTo}/landed` }); res.end(); return; }
      if (req.url === '/bounce-307') { res.writeHead(307, { location: `${bounceTo}/landed` }); res.end(); return; }
      if (req.url === '/echo') {
        // A careless target: echoes what it was sent into a same-origin redirect and its error page.
        const sent = `${req.headers['x-key'] ?? ''}|${req.headers.authorization ?? ''}`;
        res.writeHead(302, { location: `/landed?got=${encodeURIComponent(sent)}` }); res.end(); return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello keepwatch');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startTestApp({ config: { 'security.allow_private_targets': true, 'security.credentials_kek_base64': randomBytes(32).toString('base64') } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => {
    await t.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const resultCount = async () => (await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM check_results'))[0]!.n;
  const createHttp = async (check: Json, extra: Json = {}) => {
    const res = await api('POST', '/api/v1/targets', { name: 'web', check: { type: 'http', ...check }, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as Json).id as string;
  };

  it('POST /targets/test runs the spec once and answers the result; nothing is stored', async () => {
    const before = await resultCount();
    const res = await api('POST', '/api/v1/targets/test', { type: 'http', url: `${base}/health`, expected_body_contains: 'keepwatch' });
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as Json;
    assert.equal(result.status, 'up');
    assert.equal(result.error, null);
    assert.equal(result.region, 'local');
    assert.equal(result.status_code, 200);
    assert.match(result.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/, 'the check result shape: a UUIDv7 naming the run');
    assert.equal(result.target_id, null, 'no monitor');
    assert.equal(typeof result.duration_ms, 'number');
    assert.ok(Number.isInteger(result.duration_ms));
    assert.ok(!Number.isNaN(Date.parse(result.checked_at)));
    assert.equal(typeof result.timings.connect, 'number');
    for (const ms of Object.values(result.timings) as number[]) assert.equal(ms, Math.round(ms * 100) / 100, 'timings to 0.01 ms');
    assert.equal(seen.at(-1)!.url, '/health');
    const down = (await api('POST', '/api/v1/targets/test', { type: 'http', url: `${base}/down` })).json() as Json;
    assert.deepEqual([down.status, down.error, down.status_code], ['down', 'unexpected status 500', 500]);
    assert.equal(await resultCount(), before, 'a test writes no result');
  });

  it('test holds the spec to the write rules, naming the body field; heartbeat and manual are not probeable', async () => {
    expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: 'ftp://93.184.216.34/' }), 400, 'VALIDATION_FAILED', 'url');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: `${base}/{{nope}}` }), 422, 'UNRESOLVED_VARIABLE', 'url');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'http', url: base, extra: 1 }), 422, 'INVALID_JSON');
    const duplicate = expectError(await api('POST', '/api/v1/targets/test', { type: 'dns', domain: 'example.com', record_type: 'A', expected_records: ['192.0.2.1', '192.0.2.1'] }), 400, 'INVALID_DNS_PARAMS', 'expected_records[1]');
    assert.doesNotMatch(duplicate.message, /check\./, 'the message names fields as the body has them');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'heartbeat' }), 400, 'HEARTBEAT_NOT_PROBEABLE', 'type');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'manual' }), 400, 'HEARTBEAT_NOT_PROBEABLE', 'type');
    // The kind first, even where its own fields would fail their schema.
    expectError(await api('POST', '/api/v1/targets/test', { type: 'heartbeat', period: 5 }), 400, 'HEARTBEAT_NOT_PROBEABLE', 'type');
    expectError(await api('POST', '/api/v1/targets/test', { type: 'heartbeat', period: 60_000, grace: -1 }), 400, 'HEARTBEAT_NOT_PROBEABLE', 'type');
    // An unknown key still wins over every other failure (Conventions 7).
    expectError(await api('POST', '/api/v1/targets/test', { type: 'manual', url: 'https://example.com' }), 422, 'INVALID_JSON', 'url');
  });

  it('test resolves {{key}} variables, secrets in headers included', async () => {
    assert.equal((await api('POST', '/api/v1/variables', { key: 'probe_path', value: 'from-variable' })).statusCode, 201);
    assert.equal((await api('POST', '/api/v1/variables', { key: 'probe_token', value: 's3cret', is_secret: true })).statusCode, 201);
    const res = await api('POST', '/api/v1/targets/test', { type: 'http', url: `${base}/{{probe_path}}`, headers: { 'X-Token': '{{probe_token}}' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as Json).status, 'up');
    assert.deepEqual([seen.at(-1)!.url, seen.at(-1)!.headers['x-token']], ['/from-variable', 's3cret']);
  });

  it('test and check-now send a header or body holding a secret to no other origin across redirects', async () => {
    const other = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c; }).on('end', () => { seen.push({ url: `elsewhere${req.url}`, headers: req.headers, body }); res.end('ok'); });
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      bounceTo = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      assert.equal((await api('POST', '/api/v1/variables', { key: 'hop_key', value: 'hop-s3cret', is_secret: true })).statusCode, 201);
      const spec = { url: `${base}/bounce`, headers: { 'X-Key': '{{hop_key}}', 'X-Plain': 'p' } };
      const tested = (await api('POST', '/api/v1/targets/test', { type: 'http', ...spec })).json() as Json;
      assert.deepEqual([tested.status, tested.redirects], ['up', 1], JSON.stringify(tested));
      const id = await createHttp(spec, { enabled: false });
      assert.equal(((await api('POST', `/api/v1/targets/${id}/check-now`)).json() as Json).status, 'up');
      const landed = seen.filter((h) => h.url === 'elsewhere/landed');
      assert.equal(landed.length, 2);
      for (const { headers } of landed) assert.deepEqual([headers['x-key'], headers['x-plain']], [undefined, 'p']);
      assert.equal(seen.filter((h) => h.url === '/bounce').at(-1)!.headers['x-key'], 'hop-s3cret', 'the check\'s origin got it');

      const posted = (await api('POST', '/api/v1/targets/test', { type: 'http', method: 'POST', url: `${base}/bounce-307`, body: 'key={{hop_key}}' })).json() as Json;
      assert.equal(posted.status, 'down');
      assert.match(posted.error as string, /^redirect 307 to another origin \(http:\/\/127\.0\.0\.1:\d+\) not followed: the request body holds a secret variable$/);
      assert.equal(seen.filter((h) => h.url === 'elsewhere/landed').length, 2, 'the body went nowhere else');
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('a secret value or stored credential the target echoes is shown as *** in test, check-now and the history', async () => {
    assert.equal((await api('POST', '/api/v1/variables', { key: 'echo_key', value: 'echo s3cret/value', is_secret: true })).statusCode, 201);
    const tested = (await api('POST', '/api/v1/targets/test', { type: 'http', url: `${base}/echo`, headers: { 'X-Key': '{{echo_key}}' }, bearer_token: 'echo-bearer' })).json() as Json;
    assert.equal(tested.final_url, `${base}/landed?got=***%7CBearer%20***`, 'percent-encoded, both masked');
    const id = await createHttp({ url: `${base}/echo`, headers: { 'X-Key': '{{echo_key}}' }, bearer_token: 'echo-bearer' }, { enabled: false });
    const run = (await api('POST', `/api/v1/targets/${id}/check-now`)).json() as Json;
    assert.equal(run.final_url, tested.final_url);
    const stored = (await api('GET', `/api/v1/targets/${id}/results`)).json() as Json;
    assert.equal(stored.results[0].final_url, tested.final_url);
    assert.equal(seen.filter((h) => h.url === '/echo').at(-1)!.headers['x-key'], 'echo s3cret/value', 'the target got the real values');
  });

  it('a referenced secret that cannot be opened makes the check an error naming it; {{key}} is never sent', async () => {
    const variable = await api('POST', '/api/v1/variables', { key: 'lost_token', value: 'S3CRET', is_secret: true });
    assert.equal(variable.statusCode, 201, variable.body);
    const id = await createHttp({ url: `${base}/lost`, headers: { authorization: 'Bearer {{lost_token}}' } });
    // As if the key it was sealed under were no longer configured.
    await t.services.db.query('UPDATE variables SET sealed_value = $2 WHERE id = $1', [variable.json().id, sealerFor(randomBytes(32)).seal('S3CRET')]);
    const sent = seen.length;
    const res = await api('POST', `/api/v1/targets/${id}/check-now`);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as Json;
    assert.equal(result.status, 'error');
    assert.match(result.error as string, /\{\{lost_token\}\} cannot be read/);
    assert.equal(seen.length, sent, 'no request went out');
  });

  it('test and check-now need targets:execute', async () => {
    const writer = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['targets:write'] }));
    expectError(await writer('POST', '/api/v1/targets/test', { type: 'http', url: base }), 403, 'INSUFFICIENT_SCOPE');
    const id = await createHttp({ url: base });
    expectError(await writer('POST', `/api/v1/targets/${id}/check-now`), 403, 'INSUFFICIENT_SCOPE');
    const executor = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['targets:execute'] }));
    assert.equal((await executor('POST', `/api/v1/targets/${id}/check-now`)).statusCode, 200);
  });

  it('check-now runs the stored check with its stored credentials and writes the result to the history', async () => {
    const id = await createHttp({ url: `${base}/private`, bearer_token: 'stored-token' }, { enabled: false });
    const res = await api('POST', `/api/v1/targets/${id}/check-now`);
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json() as Json;
    assert.equal(seen.at(-1)!.headers.authorization, 'Bearer stored-token', 'the stored (sealed) credential was opened and sent');
    assert.deepEqual([result.target_id, result.status, result.region, result.status_code], [id, 'up', 'local', 200]);
    assert.match(result.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    for (const ms of Object.values(result.timings) as number[]) assert.equal(ms, Math.round(ms * 100) / 100, 'timings to 0.01 ms');
    const list = (await api('GET', `/api/v1/targets/${id}/results`)).json() as Json;
    assert.equal(list.total, 1);
    assert.deepEqual(list.results[0], result, 'the history shows the same result');
  });

  it('check-now: heartbeat and manual are 400 HEARTBEAT_NOT_PROBEABLE; a foreign or unknown id is 404', async () => {
    for (const check of [{ type: 'heartbeat' }, { type: 'manual' }]) {
      const res = await api('POST', '/api/v1/targets', { name: check.type, check });
      assert.equal(res.statusCode, 201, res.body);
      const err = expectError(await api('POST', `/api/v1/targets/${(res.json() as Json).id}/check-now`), 400, 'HEARTBEAT_NOT_PROBEABLE');
      assert.equal(err.field, undefined, 'check-now has no body to name');
    }
    const other = await createTenantWithToken(t, { plan: 'team' });
    const foreign = await createHttp({ url: base });
    expectError(await client(t, other.token)('POST', `/api/v1/targets/${foreign}/check-now`), 404, 'NOT_FOUND');
    expectError(await client(t, other.token)('GET', `/api/v1/targets/${foreign}/results`), 404, 'NOT_FOUND');
    expectError(await api('POST', '/api/v1/targets/0190a5b4-0000-7000-8000-000000000000/check-now'), 404, 'NOT_FOUND');
  });

  it('test refuses a flow spec on a plan whose flow cap is 0: 403 FLOW_CHECKS_DISABLED, as a create would', async () => {
    const flow = { type: 'flow', start_url: base, steps: [{ op: 'assert_url', contains: '127.0.0.1' }] };
    const free = await createTenantWithToken(t, { plan: 'free' });
    expectError(await client(t, free.token)('POST', '/api/v1/targets/test', flow), 403, 'FLOW_CHECKS_DISABLED');
    expectError(await client(t, free.token)('POST', '/api/v1/targets', { name: 'f', check: flow }), 403, 'FLOW_CHECKS_DISABLED');
    // A plan with flows passes the switch (the run itself is the flow probe's business).
    assert.equal((await api('POST', '/api/v1/targets/test', flow)).statusCode, 200);
  });

  it('check-now on a held monitor is 409 TARGET_HELD: not probed, nothing written; released, it runs', async () => {
    const id = await createHttp({ url: `${base}/down` }, { alert_confirmations: 1 });
    const hold = (at: Date | null) => t.services.db.query('UPDATE targets SET held_at = $2 WHERE id = $1', [id, at]);
    await hold(new Date());
    const hitsBefore = seen.length;
    expectError(await api('POST', `/api/v1/targets/${id}/check-now`), 409, 'TARGET_HELD');
    assert.equal(seen.length, hitsBefore, 'the server was not probed');
    assert.equal(((await api('GET', `/api/v1/targets/${id}/results`)).json() as Json).total, 0, 'no result, so nothing to alert on');
    await hold(null);
    assert.equal((await api('POST', `/api/v1/targets/${id}/check-now`)).statusCode, 200);
    const doc = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Json;
    const op = doc.paths['/api/v1/targets/{id}/check-now'].post;
    assert.ok(op.responses['409'], 'the 409 is documented');
    assert.match(op.description, /TARGET_HELD/);
  });

  it('check-now stamps the stale cap from the effective interval (plan floor over the stored one), as the scheduler does', async () => {
    const other = await createTenantWithToken(t, { plan: 'team' });
    const res = await client(t, other.token)('POST', '/api/v1/targets', { name: 'web', check: { type: 'http', url: base }, interval: 60 });
    assert.equal(res.statusCode, 201, res.body);
    const id = (res.json() as Json).id as string;
    await overrideCaps(t, other.accountId, { min_check_interval_secs: 300 });
    assert.equal((await client(t, other.token)('POST', `/api/v1/targets/${id}/check-now`)).statusCode, 200);
    const [row] = await t.services.db.query<{ stale: number }>('SELECT stale_after_ms::int AS stale FROM check_results WHERE target_id = $1', [id]);
    assert.equal(row!.stale, 3 * 300_000, 'three effective intervals (300 s), not three stored ones (60 s)');
  });

  it('results: newest first, paginated, filtered by window and region, bounded by retention_days', async () => {
    const id = await createHttp({ url: base });
    const now = t.clock.now().getTime();
    const at = (daysAgo: number, minutes = 0) => new Date(now - daysAgo * 86_400_000 - minutes * 60_000);
    const rows: Array<[Date, string, 'up' | 'down']> = [
      [at(0, 1), 'local', 'up'], [at(0, 2), 'eu', 'down'], [at(0, 3), 'local', 'up'], [at(10), 'local', 'up'], [at(200), 'local', 'down'],
    ];
    for (const [checkedAt, region, status] of rows) {
      t.services.results.push({ targetId: id, orgId: tenant.orgId, region, checkedAt, status, duration_ms: 5, error: status === 'up' ? null : 'x', fields: { status_code: 200 } });
    }
    await t.services.results.flush();
    const url = `/api/v1/targets/${id}/results`;
    const all = (await api('GET', url)).json() as Json;
    // team keeps 395 days readable: all five, newest first.
    assert.equal(all.total, 5);
    assert.deepEqual(all.results.map((r: Json) => r.checked_at), rows.map(([d]) => d.toISOString()));
    assert.equal(all.results[1].status_code, 200, 'kind fields at the top level');
    const page = (await api('GET', `${url}?limit=2&offset=1`)).json() as Json;
    assert.deepEqual([page.total, page.limit, page.offset, page.results.map((r: Json) => r.region)], [5, 2, 1, ['eu', 'local']]);
    assert.deepEqual([all.limit, all.offset], [50, 0], 'a list\'s default page');
    assert.equal(((await api('GET', `${url}?limit=1000`)).json() as Json).limit, 1000);
    for (const bad of ['limit=0', 'limit=1001', 'offset=-1']) expectError(await api('GET', `${url}?${bad}`), 400, 'VALIDATION_FAILED', bad.split('=')[0]);
    assert.equal(((await api('GET', `${url}?region=eu`)).json() as Json).total, 1);
    const window = (await api('GET', `${url}?from=${at(11).toISOString()}&to=${at(0, 2).toISOString()}`)).json() as Json;
    assert.deepEqual(window.results.map((r: Json) => r.checked_at), [at(0, 2), at(0, 3), at(10)].map((d) => d.toISOString()));
    expectError(await api('GET', `${url}?from=${at(0).toISOString()}&to=${at(1).toISOString()}`), 400, 'VALIDATION_FAILED', 'from');
    expectError(await api('GET', `${url}?from=yesterday`), 400, 'VALIDATION_FAILED');
    // A plan keeping 30 days hides the 200-day-old result even when asked for it.
    await overrideCaps(t, tenant.accountId, { retention_days: 30 });
    const kept = (await api('GET', `${url}?from=${at(300).toISOString()}`)).json() as Json;
    assert.equal(kept.total, 4);
    assert.ok(kept.results.every((r: Json) => Date.parse(r.checked_at) >= now - 30 * 86_400_000));
  });
});
