// Duplicate (monitoring-api.md, "Duplicate rules"; CONTRACT.md body): address per kind, what is
// copied, all-or-nothing with `copies[i].field`, limits, quotas and Idempotency-Key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, PUBLIC_URL, type Api, type Json } from './helpers.js';

describe('targets: duplicate', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let channelId: string;
  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': randomBytes(32).toString('base64') } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    channelId = (await api('POST', '/api/v1/notification-channels', { name: 'hook', config: { type: 'email', to: 'ops@example.com' } })).json().id;
  });
  after(async () => { await t.close(); });

  const duplicate = (id: string, copies: Json[], headers?: Record<string, string>) => api('POST', `/api/v1/targets/${id}/duplicate`, { copies }, headers);
  const create = async (body: Json) => {
    const res = await api('POST', '/api/v1/targets', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Json;
  };
  const total = async () => ((await api('GET', '/api/v1/targets?limit=1')).json() as Json).total as number;
  const storedCheck = async (id: string) => (await t.services.db.query<{ check_spec: Json }>('SELECT check_spec FROM targets WHERE id = $1', [id]))[0]!.check_spec;

  it('copies the stored row with credentials, paused state, tags, group, bindings, regions and policy; the caller owns each copy', async () => {
    const source = await create(httpTarget({
      name: 'api', enabled: false, tags: ['prod', 'eu'], group_name: 'edge', interval: 90, owner_user_id: null,
      alerts: [{ channel_id: channelId }], region_policy: { count: 1 }, alert_confirmations: 3,
    }, { bearer_token: 'secret-token', headers: { 'x-env': 'prod' } }));
    const res = await duplicate(source.id, [{ name: 'api copy' }, { name: 'api eu', address: 'https://93.184.216.35/health' }]);
    assert.equal(res.statusCode, 201, res.body);
    const [same, moved] = res.json().targets as Json[];
    for (const copy of [same!, moved!]) {
      assert.notEqual(copy.id, source.id);
      for (const key of ['enabled', 'tags', 'group_name', 'interval', 'alerts', 'regions', 'region_policy', 'alert_confirmations']) {
        assert.deepEqual(copy[key], source[key], key);
      }
      assert.equal(copy.owner_user_id, tenant.userId);
      assert.equal(copy.check.bearer_token, '***');
      assert.deepEqual(copy.check.headers, { 'x-env': 'prod' });
    }
    assert.deepEqual([same!.name, same!.check.url], ['api copy', PUBLIC_URL]);
    assert.deepEqual([moved!.name, moved!.check.url], ['api eu', 'https://93.184.216.35/health']);
    const sealed = await storedCheck(moved!.id);
    assert.notEqual(sealed.bearer_token, 'secret-token');
    assert.equal(t.services.sealer.open(sealed.bearer_token), 'secret-token', 'the copy carries the credential, sealed');
  });

  it('address per kind: host:port for tcp (a bare host keeps the port), host for ping, domain for dns and domain_expiry, start_url for flow', async () => {
    const tcp = await create({ name: 'tcp', check: { type: 'tcp', host: '93.184.216.34', port: 5432 } });
    const copies = (await duplicate(tcp.id, [{ name: 'a', address: '93.184.216.35' }, { name: 'b', address: '93.184.216.36:6432' }, { name: 'c', address: '[2606:2800:220:1::1]:5433' }])).json().targets as Json[];
    assert.deepEqual(copies.map((c) => [c.check.host, c.check.port]), [['93.184.216.35', 5432], ['93.184.216.36', 6432], ['2606:2800:220:1::1', 5433]]);
    // An address of the family the source's ip_version excludes is the address's fault.
    const v4 = await create({ name: 'tcp4', check: { type: 'tcp', host: '93.184.216.34', port: 5432, ip_version: 'ipv4' } });
    expectError(await duplicate(v4.id, [{ name: 'a', address: '[2606:2800:220:1::1]:5433' }]), 400, 'INVALID_IP_VERSION', 'copies[0].address');
    // So is an https address for a source that sends credentials with verify_tls off over http.
    const plain = await create({ name: 'plain', check: { type: 'http', url: 'http://93.184.216.34/', bearer_token: 'tok', verify_tls: false } });
    expectError(await duplicate(plain.id, [{ name: 'a', address: 'https://93.184.216.34/' }]), 400, 'VALIDATION_FAILED', 'copies[0].address');
    const tls = await create({ name: 'tls', check: { type: 'tls_cert', host: '93.184.216.34', port: 8443 } });
    assert.deepEqual((await duplicate(tls.id, [{ name: 'x', address: '93.184.216.35' }])).json().targets[0].check.port, 8443);
    const ping = await create({ name: 'ping', check: { type: 'ping', host: '93.184.216.34' } });
    assert.equal((await duplicate(ping.id, [{ name: 'x', address: '93.184.216.35' }])).json().targets[0].check.host, '93.184.216.35');
    const dns = await create({ name: 'dns', check: { type: 'dns', domain: 'example.com', record_type: 'A' } });
    assert.equal((await duplicate(dns.id, [{ name: 'x', address: 'example.org' }])).json().targets[0].check.domain, 'example.org');
    const expiry = await create({ name: 'exp', check: { type: 'domain_expiry', domain: 'example.com' } });
    assert.equal((await duplicate(expiry.id, [{ name: 'x', address: 'example.net' }])).json().targets[0].check.domain, 'example.net');
    expectError(await duplicate(expiry.id, [{ name: 'x', address: 'example.de' }]), 400, 'VALIDATION_FAILED', 'copies[0].address');
    const flow = await create({ name: 'flow', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'fill', selector: '#p', value: 'pw' }, { op: 'assert_text', contains: 'ok' }] } });
    const flowCopy = (await duplicate(flow.id, [{ name: 'x', address: 'https://93.184.216.35/login' }])).json().targets[0] as Json;
    assert.equal(flowCopy.check.start_url, 'https://93.184.216.35/login');
    assert.deepEqual(flowCopy.check.steps, [{ op: 'fill', selector: '#p', value: '***' }, { op: 'assert_text', contains: 'ok', selector: null }]);
  });

  it('heartbeat and manual take no address (INVALID_ADDRESS); a heartbeat copy gets its own ping URL', async () => {
    const hb = await create({ name: 'cron', check: { type: 'heartbeat' } });
    const manual = await create({ name: 'board', check: { type: 'manual' } });
    expectError(await duplicate(hb.id, [{ name: 'x' }, { name: 'y', address: 'example.com' }]), 400, 'INVALID_ADDRESS', 'copies[1].address');
    expectError(await duplicate(manual.id, [{ name: 'y', address: 'example.com' }]), 400, 'INVALID_ADDRESS', 'copies[0].address');
    expectError(await duplicate(hb.id, [{ name: 'y', address: '' }]), 400, 'INVALID_ADDRESS', 'copies[0].address');
    const copy = (await duplicate(hb.id, [{ name: 'cron 2' }])).json().targets[0] as Json;
    const hashes = await t.services.db.query<{ token_hash: string }>('SELECT token_hash FROM heartbeats WHERE target_id = ANY($1::uuid[])', [[hb.id, copy.id]]);
    assert.equal(new Set(hashes.map((h) => h.token_hash)).size, 2);
  });

  it('all or nothing: a bad copy is named; more than 100 is 413 BULK_TOO_LARGE; an unknown or foreign source is 404', async () => {
    const source = await create(httpTarget());
    const stale = await create(httpTarget());
    const before = await total();
    expectError(await duplicate(source.id, [{ name: 'ok' }, { name: 'bad', address: 'not a url' }]), 400, 'VALIDATION_FAILED', 'copies[1].address');
    expectError(await duplicate(source.id, [{ name: 'blank', address: ' ' }]), 400, 'VALIDATION_FAILED', 'copies[0].address');
    expectError(await duplicate(source.id, [{ name: 'ok' }, { name: 'private', address: 'http://127.0.0.1/' }]), 400, 'VALIDATION_FAILED', 'copies[1].address');
    expectError(await duplicate(source.id, [{ name: '  ' }]), 400, 'VALIDATION_FAILED', 'copies[0].name');
    expectError(await duplicate(source.id, [{ name: 'x', colour: 'red' }]), 422, 'INVALID_JSON', 'copies[0].colour');
    // A source whose own check no longer passes (stored while the deployment allowed private
    // targets): the copy is named, as it has no `check` of its own.
    await t.services.db.query(`UPDATE targets SET check_spec = jsonb_set(check_spec, '{url}', '"http://127.0.0.1/"') WHERE id = $1`, [stale.id]);
    const refused = expectError(await duplicate(stale.id, [{ name: 'again' }]), 400, 'VALIDATION_FAILED', 'copies[0]');
    assert.match(refused.message, /the source's check\.url/);
    expectError(await duplicate(source.id, Array.from({ length: 101 }, (_, i) => ({ name: `c${i}` }))), 413, 'BULK_TOO_LARGE', 'copies');
    assert.equal(await total(), before);
    expectError(await duplicate('0190a0a0-0000-7000-8000-000000000000', [{ name: 'x' }]), 404, 'NOT_FOUND');
    const other = await createTenantWithToken(t, { plan: 'team' });
    const theirs = (await client(t, other.token)('POST', '/api/v1/targets', httpTarget())).json().id as string;
    expectError(await duplicate(theirs, [{ name: 'x' }]), 404, 'NOT_FOUND');
  });

  it('a batch without room is 422 QUOTA_EXCEEDED; flow copies beyond the plan are 400 INVALID_FLOW_PARAMS', async () => {
    const small = await createTenantWithToken(t, { plan: 'team' });
    const smallApi = client(t, small.token);
    await overrideCaps(t, small.accountId, { max_targets: 3, max_flow_checks: 1 });
    const source = (await smallApi('POST', '/api/v1/targets', httpTarget())).json().id as string;
    assert.equal(expectError(await smallApi('POST', `/api/v1/targets/${source}/duplicate`, { copies: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }), 422, 'QUOTA_EXCEEDED').quota, 'max_targets');
    const flow = (await smallApi('POST', '/api/v1/targets', { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: '/' }] } })).json().id as string;
    expectError(await smallApi('POST', `/api/v1/targets/${flow}/duplicate`, { copies: [{ name: 'f2' }] }), 400, 'INVALID_FLOW_PARAMS');
  });

  it('Idempotency-Key: a retry answers the first answer and copies nothing more; another request with the key is 409', async () => {
    const source = await create(httpTarget());
    const key = { 'idempotency-key': `dup-${randomBytes(6).toString('hex')}` };
    const first = await duplicate(source.id, [{ name: 'once' }], key);
    assert.equal(first.statusCode, 201);
    const before = await total();
    const again = await duplicate(source.id, [{ name: 'once' }], key);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(await total(), before);
    expectError(await duplicate(source.id, [{ name: 'twice' }], key), 409, 'CONFLICT', 'Idempotency-Key');
    // The same request with its keys in another order is the same request: a replay.
    const orderKey = { 'idempotency-key': `order-${randomBytes(6).toString('hex')}` };
    assert.equal((await duplicate(source.id, [{ name: 'ordered', address: 'https://a.example.com/' }], orderKey)).statusCode, 201);
    const reordered = await duplicate(source.id, [{ address: 'https://a.example.com/', name: 'ordered' }], orderKey);
    assert.equal(reordered.statusCode, 201, reordered.body);
    assert.equal(reordered.headers['idempotent-replayed'], 'true');
    expectError(await duplicate(source.id, [{ name: 'x' }], { 'idempotency-key': 'has space' }), 400, 'VALIDATION_FAILED', 'Idempotency-Key');

    const twinKey = { 'idempotency-key': `twin-${randomBytes(6).toString('hex')}` };
    const twins = await Promise.all(Array.from({ length: 4 }, () => duplicate(source.id, [{ name: 'twin' }], twinKey)));
    assert.ok(twins.every((r) => r.statusCode === 201));
    assert.equal(new Set(twins.map((r) => r.json().targets[0].id)).size, 1, 'parallel twins copy once');
    assert.equal(await total(), before + 2, 'the reordered retry and the twins each copied once');
  });
});
