// The ping probe over real ICMP sockets (monitoring-api.md, "ping"): a reply is up with its
// round-trip time, silence for the timeout is down, the connect-time guard refuses blocked
// addresses, and a node that cannot open an ICMP socket answers `error` with the reason.
// As root with datagram ICMP refused by `net.ipv4.ping_group_range`, this runs on the raw fallback.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { NetworkGuard, type Resolver } from '../../src/net/guard.js';
import { loadIcmp, loadIcmpBinding } from '../../src/probes/icmp.js';
import { createPingProbe, pingProbe, type PingCheckT } from '../../src/probes/ping.js';
import type { ProbeContext } from '../../src/probes/types.js';
import { RdapBootstrap } from '../../src/rdap/index.js';
import { PingCheck } from '../../src/targets/check-specs.js';

const rdap = new RdapBootstrap('file:///nonexistent', { now: () => new Date() });
const open = new NetworkGuard({ allowPrivate: true });
const ctxOf = (guard: NetworkGuard = open, signal?: AbortSignal): ProbeContext => ({ guard, rdap, ...(signal && { signal }) });
const check = (fields: Partial<PingCheckT> & { host: string }): PingCheckT =>
  Value.Default(PingCheck, { type: 'ping', ...fields }) as PingCheckT;
const guardWith = (names: Record<string, Awaited<ReturnType<Resolver>>>, allowPrivate: boolean): NetworkGuard =>
  new NetworkGuard({
    allowPrivate,
    resolver: async (host) => {
      const found = names[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
      return found;
    },
  });

// TEST-NET-2 (RFC 5737): never routed. Not TEST-NET-1: on the CI machines 192.0.2.1 is the gateway.
const SILENT = '198.51.100.1';

/** Whether the kernel hands this process datagram ICMP sockets (net.ipv4.ping_group_range). */
function datagramAllowed(): boolean {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ping_group_range', 'utf8').trim().split(/\s+/).map(Number);
  return [process.getegid!(), ...process.getgroups!()].some((g) => g >= low! && g <= high!);
}

describe('ping probe', () => {
  it('the addon is built and loads', () => {
    assert.equal(loadIcmp().ok, true, 'build/Release/keepwatch_ping.node missing: npm ci builds it');
  });

  it('127.0.0.1 is up: duration is the round-trip time, the address is reported', async () => {
    const r = await pingProbe(check({ host: '127.0.0.1' }), ctxOf());
    assert.equal(r.status, 'up', r.error ?? '');
    assert.equal(r.error, null);
    assert.ok(r.duration_ms > 0 && r.duration_ms < 1000, `duration_ms ${r.duration_ms}`);
    assert.deepEqual(r.fields, { address: '127.0.0.1' });
    assert.equal(r.timings, undefined);
  });

  // The machine (and CI's) has ::1 on lo; a machine without it fails here rather than skip.
  it('::1 is up over ICMPv6', async () => {
    const r = await pingProbe(check({ host: '::1' }), ctxOf());
    assert.equal(r.status, 'up', r.error ?? '');
    assert.ok(r.duration_ms > 0);
    assert.deepEqual(r.fields, { address: '::1' });
  });

  it('an unroutable address is down after the timeout, within the budget', async () => {
    const t0 = performance.now();
    const r = await pingProbe(check({ host: SILENT, timeout: 1000 }), ctxOf());
    const took = performance.now() - t0;
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'no echo reply within 1000 ms');
    assert.ok(took >= 990 && took < 2000, `took ${took} ms`);
  });

  it('a name is resolved through the guard; each address is echoed in turn until one replies', async () => {
    // The silent address comes first: it gets its share of the budget, then 127.0.0.1 answers.
    const guard = guardWith({ 'pair.keepwatch.invalid': [{ address: SILENT, family: 4 }, { address: '127.0.0.1', family: 4 }] }, true);
    const t0 = performance.now();
    const r = await pingProbe(check({ host: 'pair.keepwatch.invalid', timeout: 1000 }), ctxOf(guard));
    const took = performance.now() - t0;
    assert.equal(r.status, 'up', r.error ?? '');
    assert.deepEqual(r.fields, { address: '127.0.0.1' });
    assert.equal(typeof r.timings?.dns, 'number');
    assert.ok(took >= 450 && took < 1000, `took ${took} ms`);
  });

  it('a name that does not resolve is down with the reason', async () => {
    const r = await pingProbe(check({ host: 'nowhere.keepwatch.invalid' }), ctxOf(guardWith({}, true)));
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'host not found: nowhere.keepwatch.invalid');
  });

  it('the guard refuses a private literal at connect time', async () => {
    const r = await pingProbe(check({ host: '127.0.0.1' }), ctxOf(new NetworkGuard({ allowPrivate: false })));
    assert.equal(r.status, 'down');
    assert.match(r.error ?? '', /^connection to 127\.0\.0\.1 refused by the network guard: /);
  });

  it('the guard refuses a name that resolves to 127.0.0.1', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const r = await pingProbe(check({ host: 'rebind.example.com' }), ctxOf(guard));
    assert.equal(r.status, 'down');
    assert.match(r.error ?? '', /^connection to rebind\.example\.com refused by the network guard: every address is in a blocked range: 127\.0\.0\.1/);
  });

  it('an aborted context signal stops the check', async () => {
    const r = await pingProbe(check({ host: SILENT }), ctxOf(open, AbortSignal.abort()));
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'check aborted');
  });

  it('without the raw fallback, a datagram socket refused by ping_group_range is an error naming why', async () => {
    const r = await createPingProbe({ datagramOnly: true })(check({ host: '127.0.0.1' }), ctxOf());
    if (datagramAllowed()) {
      assert.equal(r.status, 'up', r.error ?? '');
      return;
    }
    assert.equal(r.status, 'error');
    assert.equal(r.error, `cannot open ICMP socket: EACCES (net.ipv4.ping_group_range excludes gid ${process.getegid!()})`);
  });

  it('an addon that failed to build is an error result, not a crash', async () => {
    const missing = loadIcmpBinding('../../build/Release/no-such-addon.node');
    assert.deepEqual(missing, { ok: false, reason: 'ICMP support not built' });
    const r = await createPingProbe({ load: () => missing })(check({ host: '127.0.0.1' }), ctxOf());
    assert.deepEqual(r, { status: 'error', duration_ms: 0, error: 'ICMP support not built' });
  });
});
