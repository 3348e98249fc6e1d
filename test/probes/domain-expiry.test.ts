// The domain_expiry probe against a local RDAP server and its bootstrap registry
// (monitoring-api.md, "domain_expiry", "Result status mapping", Limits: per-TLD RDAP cap): the
// expiration event judged against warn_days / critical_days, the registrar, the JSON body of
// non-up results, `error` when no date can be read, and the in-flight cap per TLD.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { NetworkGuard } from '../../src/net/guard.js';
import { domainExpiryProbe, type DomainExpiryCheckT } from '../../src/probes/domain-expiry.js';
import type { ProbeContext, ProbeResult } from '../../src/probes/types.js';
import { RdapBootstrap } from '../../src/rdap/index.js';
import { DomainExpiryCheck } from '../../src/targets/check-specs.js';
import { daysAfter } from '../helpers/certs.js';
import { startRdapServer, type RdapServer } from '../helpers/rdap-server.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const clock = { now: () => new Date() };
const REGISTRAR = 'Example Registrar, Inc.';
// The SSRF guard does not apply to RDAP: a guard that refuses 127.0.0.1 must not stop these checks.
const strictGuard = new NetworkGuard({ allowPrivate: false });

const check = (domain: string, fields: Partial<DomainExpiryCheckT> = {}): DomainExpiryCheckT =>
  Value.Default(DomainExpiryCheck, { type: 'domain_expiry', domain, ...fields }) as DomainExpiryCheckT;
const iso = (days: number): string => daysAfter(NOW, days).toISOString();

function body(r: ProbeResult): Record<string, unknown> {
  assert.notEqual(r.error, null, 'a non-up result carries the JSON body');
  return JSON.parse(r.error!) as Record<string, unknown>;
}

/** Why a lookup failed, from an `error` result's JSON body (dates null: none was read). */
function reason(r: ProbeResult): string {
  assert.equal(r.status, 'error');
  const { reason: why, ...rest } = body(r);
  assert.deepEqual(rest, { domain: rest.domain, days_remaining: null, expiration_date: null });
  assert.equal(typeof why, 'string');
  return why as string;
}

async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('domain_expiry probe', () => {
  let rdapServer: RdapServer;
  let ctx: ProbeContext;

  before(async () => {
    const deadPort = await closedPort();
    rdapServer = await startRdapServer({
      tlds: ['test'],
      tldsWithoutSlash: ['noslash'],
      extraServices: [[['unreachable'], [`http://127.0.0.1:${deadPort}/rdap/`]]],
    });
    const d = rdapServer.domains;
    d.set('far.test', { expiration: iso(365.5), registrar: { fn: REGISTRAR, handle: '1234' } });
    d.set('ten.test', { expiration: iso(10.5), registrar: { fn: REGISTRAR } });
    d.set('soon.test', { expiration: iso(3.5), registrar: { fn: REGISTRAR } });
    d.set('gone.test', { expiration: iso(-2.5), registrar: { fn: REGISTRAR } });
    d.set('handle.test', { expiration: iso(1.5), registrar: { handle: '292' } });
    d.set('anonymous.test', { expiration: iso(1.5) });
    d.set('nodate.test', { registrar: { fn: REGISTRAR } });
    d.set('junk.test', { rawBody: '<html>maintenance</html>' });
    d.set('badday.test', { expiration: 'someday' });
    d.set('join.noslash', { expiration: iso(100.5), registrar: { fn: REGISTRAR } });
    ctx = { guard: strictGuard, rdap: new RdapBootstrap(rdapServer.bootstrapUrl, clock), now: () => NOW };
  });
  after(() => rdapServer.close());

  it('far from expiry is up: error is null, fields hold domain, days, date and registrar', async () => {
    rdapServer.resetCounters();
    const r = await domainExpiryProbe(check('far.test'), ctx);
    assert.equal(r.status, 'up');
    assert.equal(r.error, null);
    assert.deepEqual(r.fields, { domain: 'far.test', days_remaining: 365, expiration_date: iso(365.5), registrar: REGISTRAR });
    assert.deepEqual(rdapServer.requests.map((q) => q.path), ['/rdap/domain/far.test']);
    assert.match(String(rdapServer.requests[0]!.accept), /^application\/rdap\+json/);
  });

  it('fewer days than warn_days is degraded, with the JSON body', async () => {
    const r = await domainExpiryProbe(check('ten.test', { warn_days: 14, critical_days: 7 }), ctx);
    assert.equal(r.status, 'degraded');
    assert.deepEqual(body(r), { domain: 'ten.test', days_remaining: 10, expiration_date: iso(10.5), registrar: REGISTRAR });
  });

  it('fewer days than critical_days is down', async () => {
    const r = await domainExpiryProbe(check('soon.test', { warn_days: 14, critical_days: 7 }), ctx);
    assert.equal(r.status, 'down');
    assert.deepEqual(body(r), { domain: 'soon.test', days_remaining: 3, expiration_date: iso(3.5), registrar: REGISTRAR });
  });

  it('an expired domain is down with negative days (2.5 days ago rounds down to -3)', async () => {
    const r = await domainExpiryProbe(check('gone.test'), ctx);
    assert.equal(r.status, 'down');
    assert.deepEqual(body(r), { domain: 'gone.test', days_remaining: -3, expiration_date: iso(-2.5), registrar: REGISTRAR });
  });

  it('the registrar is the registrar entity\'s vCard fn, else its handle; absent, the body leaves it out', async () => {
    const byHandle = await domainExpiryProbe(check('handle.test'), ctx);
    assert.equal(body(byHandle).registrar, '292');
    const none = await domainExpiryProbe(check('anonymous.test'), ctx);
    assert.equal(none.status, 'down');
    assert.deepEqual(body(none), { domain: 'anonymous.test', days_remaining: 1, expiration_date: iso(1.5) });
    assert.equal(none.fields?.registrar, null);
  });

  it('a base URL without a trailing slash is joined with one', async () => {
    rdapServer.resetCounters();
    const r = await domainExpiryProbe(check('join.noslash'), ctx);
    assert.equal(r.status, 'up', r.error ?? '');
    assert.deepEqual(rdapServer.requests.map((q) => q.path), ['/rdap/domain/join.noslash']);
  });

  it('a domain the registry does not know (404) is error', async () => {
    const r = await domainExpiryProbe(check('missing.test'), ctx);
    assert.equal(r.status, 'error');
    assert.equal(reason(r), 'domain not found at its RDAP server (404)');
  });

  it('an answer without an expiration event is error', async () => {
    const r = await domainExpiryProbe(check('nodate.test'), ctx);
    assert.equal(r.status, 'error');
    assert.equal(reason(r), 'the registry publishes no expiration event for this domain');
  });

  it('an answer that is not JSON, or an unreadable date, is error', async () => {
    const junk = await domainExpiryProbe(check('junk.test'), ctx);
    assert.equal(junk.status, 'error');
    assert.equal(reason(junk), 'RDAP answer is not JSON');
    const badDay = await domainExpiryProbe(check('badday.test'), ctx);
    assert.equal(badDay.status, 'error');
    assert.equal(reason(badDay), 'unreadable expiration date "someday"');
  });

  it('an unreachable registry is error with the reason', async () => {
    const r = await domainExpiryProbe(check('x.unreachable'), ctx);
    assert.equal(r.status, 'error');
    assert.equal(reason(r), 'RDAP server unreachable: connection refused');
  });

  it('a TLD the bootstrap does not list is error', async () => {
    const r = await domainExpiryProbe(check('example.zz'), ctx);
    assert.equal(r.status, 'error');
    assert.equal(reason(r), 'no RDAP service for .zz in the bootstrap registry');
  });

  it('a bootstrap registry that cannot be fetched is error', async () => {
    const rdap = new RdapBootstrap(`http://127.0.0.1:${await closedPort()}/dns.json`, clock);
    const r = await domainExpiryProbe(check('far.test'), { ...ctx, rdap });
    assert.equal(r.status, 'error');
    assert.match(reason(r), /^RDAP bootstrap http:\/\/127\.0\.0\.1:\d+\/dns\.json: /);
  });

  it('a registry slower than the timeout is error at the timeout', async () => {
    rdapServer.delayMs = 1000;
    try {
      const t0 = performance.now();
      const r = await domainExpiryProbe(check('far.test', { timeout: 150 }), ctx);
      assert.equal(r.status, 'error');
      assert.equal(reason(r), 'timeout after 150 ms');
      assert.ok(performance.now() - t0 < 900);
    } finally {
      rdapServer.delayMs = 0;
    }
  });
});

describe('domain_expiry probe: per-TLD in-flight cap', () => {
  let rdapServer: RdapServer;
  /** A fresh bootstrap per test: the gates belong to the bootstrap instance. */
  const ctxWith = (cap: number): ProbeContext =>
    ({ guard: strictGuard, rdap: new RdapBootstrap(rdapServer.bootstrapUrl, clock), rdapMaxInflight: cap, now: () => NOW });

  before(async () => {
    rdapServer = await startRdapServer({ tlds: ['test', 'example'] });
    for (let i = 1; i <= 6; i++) {
      rdapServer.domains.set(`d${i}.test`, { expiration: iso(200.5) });
      rdapServer.domains.set(`d${i}.example`, { expiration: iso(200.5) });
    }
  });
  after(() => rdapServer.close());

  it('more concurrent checks than the cap: the registry never sees more than the cap at once, and all finish', async () => {
    rdapServer.resetCounters();
    rdapServer.delayMs = 100;
    const ctx = ctxWith(2);
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => domainExpiryProbe(check(`d${i}.test`), ctx)));
    assert.deepEqual(results.map((r) => r.status), ['up', 'up', 'up', 'up', 'up', 'up']);
    assert.equal(rdapServer.requests.length, 6);
    assert.equal(rdapServer.maxInflight, 2, 'the cap is reached and never exceeded');
  });

  it('the cap is per TLD: another TLD is not held back', async () => {
    rdapServer.resetCounters();
    rdapServer.delayMs = 100;
    const ctx = ctxWith(1);
    const names = ['d1.test', 'd2.test', 'd1.example', 'd2.example'];
    const results = await Promise.all(names.map((name) => domainExpiryProbe(check(name), ctx)));
    assert.deepEqual(results.map((r) => r.status), ['up', 'up', 'up', 'up']);
    assert.equal(rdapServer.maxInflightByTld.get('test'), 1);
    assert.equal(rdapServer.maxInflightByTld.get('example'), 1);
    assert.equal(rdapServer.maxInflight, 2);
  });

  it('a check waiting for a slot gives up at its own timeout and does not keep the slot', async () => {
    rdapServer.resetCounters();
    rdapServer.delayMs = 300;
    const ctx = ctxWith(1);
    const first = domainExpiryProbe(check('d1.test', { timeout: 2000 }), ctx);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const waiting = await domainExpiryProbe(check('d2.test', { timeout: 100 }), ctx);
    assert.equal(waiting.status, 'error');
    assert.equal(reason(waiting), 'timeout after 100 ms');
    assert.equal((await first).status, 'up');
    assert.deepEqual(rdapServer.requests.map((q) => q.path), ['/rdap/domain/d1.test'], 'the timed-out check never reached the registry');
    rdapServer.delayMs = 0;
    const next = await domainExpiryProbe(check('d3.test', { timeout: 500 }), ctx);
    assert.equal(next.status, 'up', 'the slot is free again');
  });
});
