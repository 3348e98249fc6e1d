// DNS check parameters over HTTP (monitoring-api.md, "Check specs" → dns; "Errors" → INVALID_DNS_PARAMS).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, type Api, type Json } from './helpers.js';

const dns = (check: Json = {}): Json => ({ type: 'dns', domain: 'example.com', record_type: 'A', ...check });
const create = (api: Api, check: Json) => api('POST', '/api/v1/targets', { name: 'd', check });

/** Sizes and forms the spec answers INVALID_DNS_PARAMS; a schema bound would answer VALIDATION_FAILED. Fields body-relative. */
const LIMIT_CASES: Array<[Json, string]> = [
  [{ record_type: 'TXT', expected_records: Array.from({ length: 51 }, (_, i) => `v${i}`) }, 'expected_records'],
  [{ record_type: 'TXT', expected_records: ['a', 'b', 'c', 'x'.repeat(2049)] }, 'expected_records[3]'],
  [{ expected_records: ['192.0.2.1', ''] }, 'expected_records[1]'],
  [{ resolver: '' }, 'resolver'],
  [{ resolver: '1'.repeat(70) }, 'resolver'],
  [{ domain: '' }, 'domain'],
  [{ record_type: 'ANY' }, 'record_type'],
  [{ record_type: 'a' }, 'record_type'],
  [{ expected_contains: '' }, 'expected_contains'],
  [{ expected_contains: 'x'.repeat(2049) }, 'expected_contains'],
  [{ domain: `${'a'.repeat(60)}.`.repeat(5) + 'com' }, 'domain'],
];

describe('targets: dns params', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  it('create: a valid dns target stores the normalised domain; an empty expected_records is none', async () => {
    const res = await create(api, dns({ domain: '  WWW.Example.COM.  ', resolver: '1.1.1.1:53', expected_records: [] }));
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json() as Json;
    assert.equal(body.check.domain, 'www.example.com');
    assert.equal(body.check.resolver, '1.1.1.1:53');
    assert.ok(body.check.expected_records === undefined || body.check.expected_records === null);
    const got = (await api('GET', `/api/v1/targets/${body.id}`)).json() as Json;
    assert.equal(got.check.domain, 'www.example.com');

    const idn = (await create(api, dns({ domain: '*.Bücher.de' }))).json() as Json;
    assert.equal(idn.check.domain, '*.xn--bcher-kva.de');
    const ptr = (await create(api, dns({ domain: '192.0.2.1', record_type: 'PTR' }))).json() as Json;
    assert.equal(ptr.check.domain, '1.2.0.192.in-addr.arpa');
    const mx = await create(api, dns({ domain: 'example.com', record_type: 'MX', expected_records: ['010 MX.Example.com.', 'mx2.example.com'] }));
    assert.equal(mx.statusCode, 201, mx.body);
    assert.deepEqual((mx.json() as Json).check.expected_records, ['010 MX.Example.com.', 'mx2.example.com']);
    const txt = await create(api, dns({ domain: '_dmarc.example.com', record_type: 'TXT', expected_contains: 'v=DMARC1' }));
    assert.equal(txt.statusCode, 201, txt.body);
  });

  it('create: each rule is 400 INVALID_DNS_PARAMS naming its field', async () => {
    const cases: Array<[Json, string]> = [
      [{ domain: 'a.*.example.com' }, 'check.domain'],
      [{ domain: 'exa mple.com' }, 'check.domain'],
      [{ domain: `${'a'.repeat(64)}.com` }, 'check.domain'],
      [{ domain: 'example..com' }, 'check.domain'],
      [{ domain: '192.0.2.1', record_type: 'A' }, 'check.domain'],
      [{ domain: '2001:db8::1', record_type: 'AAAA' }, 'check.domain'],
      [{ resolver: 'dns.google' }, 'check.resolver'],
      [{ resolver: '1.1.1.1:0' }, 'check.resolver'],
      [{ resolver: '1.1.1.1:65536' }, 'check.resolver'],
      [{ expected_records: ['192.0.2.1'], expected_contains: '192' }, 'check.expected_records'],
      [{ expected_records: ['192.0.2.1', 'not-an-address'] }, 'check.expected_records[1]'],
      [{ expected_records: ['192.0.2.1', '192.000.002.001'] }, 'check.expected_records[1]'],
      [{ record_type: 'AAAA', expected_records: ['2001:db8::1', '2001:0db8:0:0::1'] }, 'check.expected_records[1]'],
      [{ record_type: 'MX', expected_records: ['10 mx.example.com', 'mx.example.com'] }, 'check.expected_records[1]'],
      [{ record_type: 'MX', expected_records: ['70000 mx.example.com'] }, 'check.expected_records[0]'],
      [{ record_type: 'SRV', expected_records: ['10 60 sip.example.com'] }, 'check.expected_records[0]'],
      [{ record_type: 'CAA', expected_records: ['256 issue ca.example'] }, 'check.expected_records[0]'],
      [{ record_type: 'SOA', expected_records: ['ns1.example.com hostmaster.example.com 1 2 3'] }, 'check.expected_records[0]'],
      [{ record_type: 'TXT', expected_records: ['"a" "b"', 'ab'] }, 'check.expected_records[1]'],
    ];
    for (const [check, field] of cases) {
      expectError(await create(api, dns(check)), 400, 'INVALID_DNS_PARAMS', field);
    }
  });

  it('expected_records limits: 50 values of 2048 characters; beyond is INVALID_DNS_PARAMS naming the field', async () => {
    const fifty = Array.from({ length: 50 }, (_, i) => `v${i}`);
    assert.equal((await create(api, dns({ record_type: 'TXT', expected_records: fifty }))).statusCode, 201);
    assert.equal((await create(api, dns({ record_type: 'TXT', expected_records: ['x'.repeat(2048)] }))).statusCode, 201);
    for (const [check, field] of LIMIT_CASES) {
      expectError(await create(api, dns(check)), 400, 'INVALID_DNS_PARAMS', `check.${field}`);
    }
  });

  it('POST /targets/test: the same limits and forms, naming the body\'s field', async () => {
    const test = (check: Json) => api('POST', '/api/v1/targets/test', dns(check));
    for (const [check, field] of LIMIT_CASES) {
      expectError(await test(check), 400, 'INVALID_DNS_PARAMS', field);
    }
  });

  it('PATCH: the same rules; a valid check stores the normalised domain', async () => {
    const target = (await create(api, dns())).json() as Json;
    const patch = (check: Json) => api('PATCH', `/api/v1/targets/${target.id}`, { check: dns(check) });
    expectError(await patch({ domain: 'example.*.com' }), 400, 'INVALID_DNS_PARAMS', 'check.domain');
    expectError(await patch({ domain: '192.0.2.1', record_type: 'NS' }), 400, 'INVALID_DNS_PARAMS', 'check.domain');
    expectError(await patch({ resolver: '[2001:db8::53]:99999' }), 400, 'INVALID_DNS_PARAMS', 'check.resolver');
    expectError(await patch({ expected_records: ['192.0.2.1'], expected_contains: 'x' }), 400, 'INVALID_DNS_PARAMS', 'check.expected_records');
    expectError(await patch({ record_type: 'CNAME', expected_records: ['a.example.com', 'A.EXAMPLE.COM.'] }), 400, 'INVALID_DNS_PARAMS', 'check.expected_records[1]');
    // Refused PATCHes changed nothing.
    assert.equal(((await api('GET', `/api/v1/targets/${target.id}`)).json() as Json).check.domain, 'example.com');

    const ok = await patch({ domain: ' API.Example.com. ', resolver: '[2606:4700:4700::1111]:53', expected_records: ['192.0.2.1', '192.0.2.2'] });
    assert.equal(ok.statusCode, 200, ok.body);
    const got = (await api('GET', `/api/v1/targets/${target.id}`)).json() as Json;
    assert.equal(got.check.domain, 'api.example.com');
    assert.deepEqual(got.check.expected_records, ['192.0.2.1', '192.0.2.2']);
    const ptr = await patch({ domain: '2001:db8::1', record_type: 'PTR' });
    assert.equal(ptr.statusCode, 200, ptr.body);
    assert.equal((ptr.json() as Json).check.domain, `1.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
  });
});
