// The dns probe (monitoring-api.md, "Check specs" → dns, rules 2, 3 and 5; "Result status
// mapping") against an in-process authoritative server on 127.0.0.1. Expected values are the
// spec's textual forms, written out by hand from the zone below.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { getServers, setServers } from 'node:dns';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { NetworkGuard } from '../../src/net/guard.js';
import { dnsProbe, type DnsCheckT } from '../../src/probes/dns.js';
import type { ProbeContext, ProbeResult } from '../../src/probes/types.js';
import { RdapBootstrap } from '../../src/rdap/index.js';
import { DnsTestServer, RCODE, type ZoneRecord } from '../helpers/dns-server.js';

const BIG_COUNT = 120; // 120 A records ≈ 2 kB: over the probe's 1232-byte EDNS size, so UDP is truncated.

const records: ZoneRecord[] = [
  { type: 'A', name: 'example.com', ttl: 300, data: '192.0.2.1' },
  { type: 'A', name: 'example.com', ttl: 60, data: '192.0.2.2' },
  { type: 'AAAA', name: 'example.com', data: '2001:DB8:0:0:0:0:0:1' },
  { type: 'AAAA', name: 'example.com', data: '2001:db8:0:0:1:0:0:1' },
  // www -> web -> A: a two-step chain with mixed case on the wire.
  { type: 'CNAME', name: 'www.example.com', data: 'Web.Example.com.' },
  { type: 'A', name: 'web.example.com', data: '192.0.2.80' },
  { type: 'CNAME', name: 'dangling.example.com', data: 'gone.example.com' },
  { type: 'MX', name: 'example.com', data: { preference: 10, exchange: 'mail.example.com' } },
  { type: 'MX', name: 'example.com', data: { preference: 20, exchange: 'Backup.Example.com' } },
  // One host at two preferences, for the bare-host rule.
  { type: 'MX', name: 'multi.example.com', data: { preference: 20, exchange: 'mx1.example.com' } },
  { type: 'MX', name: 'multi.example.com', data: { preference: 10, exchange: 'mx1.example.com' } },
  { type: 'MX', name: 'multi.example.com', data: { preference: 30, exchange: 'mx2.example.com' } },
  { type: 'NS', name: 'example.com', data: 'NS1.Example.COM' },
  { type: 'NS', name: 'example.com', data: 'ns2.example.com' },
  { type: 'TXT', name: 'example.com', data: ['v=spf1 include:_spf.example.net', ' ~all'] },
  { type: 'TXT', name: 'example.com', data: 'hello' },
  { type: 'SOA', name: 'example.com', data: { mname: 'ns1.example.com', rname: 'hostmaster.example.com', serial: 2024010101, refresh: 7200, retry: 3600, expire: 1209600, minimum: 300 } },
  { type: 'PTR', name: '10.2.0.192.in-addr.arpa', data: 'host10.example.com' },
  { type: 'CAA', name: 'example.com', data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
  { type: 'CAA', name: 'example.com', data: { flags: 128, tag: 'iodef', value: 'mailto:security@example.com' } },
  { type: 'SRV', name: '_sip._tcp.example.com', data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.com' } },
  { type: 'TXT', name: 'empty.example.com', data: 'only text here' },
  // Text that is itself quoted, and one record that looks like two zone-file strings.
  { type: 'TXT', name: 'quoted.example.com', data: '"quoted"' },
  { type: 'TXT', name: 'quoted.example.com', data: '"a" "b"' },
  { type: 'A', name: 'decoy.example.com', data: '192.0.2.53' },
  { type: 'A', name: 'lossy.example.com', data: '192.0.2.54' },
  { type: 'A', name: 'stray.example.com', data: '192.0.2.7' },
  ...Array.from({ length: BIG_COUNT }, (_, i): ZoneRecord => ({ type: 'A', name: 'big.example.com', data: `198.51.100.${i + 1}` })),
];

let server: DnsTestServer;
const ctx: ProbeContext = {
  guard: new NetworkGuard({ allowPrivate: true }),
  rdap: new RdapBootstrap('file:///nonexistent', { now: () => new Date() }),
};

before(async () => {
  server = await DnsTestServer.start({
    records,
    rcodes: { 'servfail.example.com': RCODE.SERVFAIL, 'refused.example.com': RCODE.REFUSED },
    silent: ['silent.example.com'],
    decoyed: ['decoy.example.com'],
    lossy: ['lossy.example.com'],
    strays: { 'stray.example.com': [{ type: 'A', name: 'other.example.net', data: '203.0.113.9' }] },
  });
});
after(() => server.close());

function check(overrides: Partial<DnsCheckT> & Pick<DnsCheckT, 'domain' | 'record_type'>): DnsCheckT {
  return { type: 'dns', resolver: server.resolver, timeout: 3000, ...overrides };
}

const probe = (overrides: Parameters<typeof check>[0], context: ProbeContext = ctx): Promise<ProbeResult> => dnsProbe(check(overrides), context);

/** The result's answers, order ignored (the spec gives them no order). */
const answersOf = (r: ProbeResult): string[] => [...(r.fields?.answers as string[])].sort();
const sorted = (values: string[]): string[] => [...values].sort();

function assertUp(r: ProbeResult): void {
  assert.equal(r.status, 'up', `expected up, got ${r.status}: ${r.error}`);
  assert.equal(r.error, null);
  assert.equal(r.fields?.matched, true);
}

function assertDown(r: ProbeResult, error: string | RegExp): void {
  assert.equal(r.status, 'down', `expected down, got ${r.status}: ${r.error}`);
  if (typeof error === 'string') assert.equal(r.error, error);
  else assert.match(r.error ?? '', error);
  assert.equal(r.fields?.matched, false);
}

describe('dns probe: answers in the spec forms', () => {
  it('A: addresses; up with no expectation; carries the result fields', async () => {
    const r = await probe({ domain: 'Example.COM.', record_type: 'A' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['192.0.2.1', '192.0.2.2']);
    assert.equal(r.fields?.domain, 'example.com');
    assert.equal(r.fields?.record_type, 'A');
    assert.equal(r.fields?.expected_contains, null);
    assert.equal('aliases' in (r.fields ?? {}), false, 'no aliases on a name that is not aliased');
    assert.equal('missing' in (r.fields ?? {}), false, 'missing/unexpected only with expected_records');
    assert.ok(r.duration_ms >= 0 && r.duration_ms < 3000, `duration_ms ${r.duration_ms}`);
    assert.equal(typeof r.timings?.dns, 'number');
  });

  it('sets RD (recursion desired) on the query', async () => {
    const before = server.queries.length;
    await probe({ domain: 'example.com', record_type: 'NS' });
    const sent = server.queries.slice(before).filter((q) => q.name === 'example.com' && q.type === 'NS');
    assert.ok(sent.length > 0, 'the query reached the server');
    assert.ok(sent.every((q) => q.recursionDesired), 'RD set on every query');
  });

  it('AAAA: compressed lower-case form', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'AAAA' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['2001:db8::1', '2001:db8::1:0:0:1']);
  });

  it('CNAME: the alias target, lower case, no trailing dot, and no aliases list', async () => {
    const r = await probe({ domain: 'www.example.com', record_type: 'CNAME' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['web.example.com']);
    assert.equal('aliases' in (r.fields ?? {}), false);
  });

  it('an aliased name lists the CNAME chain as aliases; answers hold only the queried type', async () => {
    const r = await probe({ domain: 'www.example.com', record_type: 'A' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['192.0.2.80']);
    assert.deepEqual(r.fields?.aliases, ['web.example.com']);
  });

  it('MX: `preference host`', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'MX' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['10 mail.example.com', '20 backup.example.com']);
  });

  it('NS: names lower case without trailing dot', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'NS' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['ns1.example.com', 'ns2.example.com']);
  });

  it('TXT: the strings of one record joined with no separator', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'TXT' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['hello', 'v=spf1 include:_spf.example.net ~all']);
  });

  it('SOA: `mname rname serial refresh retry expire minimum`', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'SOA' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['ns1.example.com hostmaster.example.com 2024010101 7200 3600 1209600 300']);
  });

  it('PTR: an address is looked up as its reverse name', async () => {
    const byAddress = await probe({ domain: '192.0.2.10', record_type: 'PTR' });
    assertUp(byAddress);
    assert.equal(byAddress.fields?.domain, '10.2.0.192.in-addr.arpa');
    assert.deepEqual(answersOf(byAddress), ['host10.example.com']);
    const byName = await probe({ domain: '10.2.0.192.in-addr.arpa.', record_type: 'PTR' });
    assert.deepEqual(answersOf(byName), ['host10.example.com']);
  });

  it('CAA: `flags tag "value"`', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'CAA' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['0 issue "letsencrypt.org"', '128 iodef "mailto:security@example.com"']);
  });

  it('SRV: `priority weight port target`', async () => {
    const r = await probe({ domain: '_sip._tcp.example.com', record_type: 'SRV' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['10 60 5060 sip.example.com']);
  });
});

describe('dns probe: empty answers and resolver failures are down', () => {
  it('NXDOMAIN is down', async () => {
    const r = await probe({ domain: 'nosuch.example.com', record_type: 'A' });
    assertDown(r, 'NXDOMAIN');
    assert.deepEqual(r.fields?.answers, []);
  });

  it('NOERROR with no records of the type is down', async () => {
    const r = await probe({ domain: 'empty.example.com', record_type: 'A' });
    assertDown(r, 'no A records');
    assert.deepEqual(r.fields?.answers, []);
  });

  it('an alias to a missing name is down even when expected_contains matches the alias', async () => {
    const r = await probe({ domain: 'dangling.example.com', record_type: 'A', expected_contains: 'gone' });
    assertDown(r, 'NXDOMAIN');
    assert.deepEqual(r.fields?.aliases, ['gone.example.com']);
  });

  it('SERVFAIL and REFUSED are down with the reason', async () => {
    assertDown(await probe({ domain: 'servfail.example.com', record_type: 'A' }), 'SERVFAIL');
    assertDown(await probe({ domain: 'refused.example.com', record_type: 'A' }), 'REFUSED');
  });

  it('a network error (nothing listening on the resolver port) is down, not error', async () => {
    const probeSocket = createSocket('udp4');
    probeSocket.bind(0, '127.0.0.1');
    await once(probeSocket, 'listening');
    const closedPort = probeSocket.address().port;
    await new Promise<void>((resolve) => probeSocket.close(() => resolve()));
    const r = await probe({ domain: 'example.com', record_type: 'A', resolver: `127.0.0.1:${closedPort}` });
    assertDown(r, /refused/);
  });

  it('only the outer timeout is error', async () => {
    const started = performance.now();
    const r = await probe({ domain: 'silent.example.com', record_type: 'A', timeout: 300 });
    assert.equal(r.status, 'error');
    assert.equal(r.error, 'timeout after 300 ms');
    assert.equal(r.fields?.matched, false);
    assert.ok(performance.now() - started < 2000, 'the check stops at its timeout');
    assert.ok(r.duration_ms >= 290, `duration_ms ${r.duration_ms}`);
  });

  it('an aborted check (ctx.signal) is error, not a throw', async () => {
    const controller = new AbortController();
    const pending = probe({ domain: 'silent.example.com', record_type: 'A', timeout: 5000 }, { ...ctx, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const r = await pending;
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /abort/);
  });
});

describe('dns probe: transport', () => {
  it('a truncated UDP answer is retried over TCP', async () => {
    const r = await probe({ domain: 'big.example.com', record_type: 'A' });
    assertUp(r);
    const expected = Array.from({ length: BIG_COUNT }, (_, i) => `198.51.100.${i + 1}`);
    assert.deepEqual(answersOf(r), sorted(expected));
    assert.deepEqual(server.transportsFor('big.example.com'), ['udp', 'tcp']);
  });

  it('ignores responses whose id or question does not match', async () => {
    const r = await probe({ domain: 'decoy.example.com', record_type: 'A' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['192.0.2.53']);
  });

  it('a lost UDP datagram is resent within the timeout', async () => {
    const r = await probe({ domain: 'lossy.example.com', record_type: 'A' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['192.0.2.54']);
    assert.deepEqual(server.transportsFor('lossy.example.com'), ['udp', 'udp']);
  });

  it('answers hold only records owned by the queried name (or its aliases)', async () => {
    const r = await probe({ domain: 'stray.example.com', record_type: 'A' });
    assertUp(r);
    assert.deepEqual(answersOf(r), ['192.0.2.7']);
  });

  it('the guard refuses a resolver in a blocked range unless private targets are allowed', async () => {
    const strict: ProbeContext = { ...ctx, guard: new NetworkGuard({ allowPrivate: false }) };
    const before = server.queries.length;
    const r = await probe({ domain: 'example.com', record_type: 'A' }, strict);
    assertDown(r, /blocked/);
    assert.equal(server.queries.length, before, 'no query reached the resolver');
  });

  it('without a resolver, queries the process resolver (first of dns.getServers())', async () => {
    const saved = getServers();
    setServers([server.resolver]);
    try {
      const before = server.queries.length;
      const r = await probe({ domain: 'www.example.com', record_type: 'A', resolver: null });
      assertUp(r);
      assert.deepEqual(answersOf(r), ['192.0.2.80']);
      assert.deepEqual(r.fields?.aliases, ['web.example.com'], 'aliases come through the process resolver too');
      assert.ok(server.queries.length > before, 'the query went to the process resolver');
    } finally {
      setServers(saved);
    }
  });
});

describe('dns probe: expected_contains', () => {
  it('up when some answer contains the substring', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'TXT', expected_contains: 'include:_spf' });
    assertUp(r);
    assert.equal(r.fields?.expected_contains, 'include:_spf');
  });

  it('down when none does', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'TXT', expected_contains: 'google-site' });
    assertDown(r, 'expected_contains "google-site" not found');
    assert.deepEqual(answersOf(r), ['hello', 'v=spf1 include:_spf.example.net ~all']);
  });

  it('matches an alias of the CNAME chain', async () => {
    assertUp(await probe({ domain: 'www.example.com', record_type: 'A', expected_contains: 'web.example' }));
  });
});

describe('dns probe: expected_records', () => {
  const expectRecords = (domain: string, recordType: DnsCheckT['record_type'], expected: string[]): Promise<ProbeResult> =>
    probe({ domain, record_type: recordType, expected_records: expected });

  it('an exact set is up, order and TTL ignored, with empty missing/unexpected', async () => {
    const r = await expectRecords('example.com', 'A', ['192.0.2.2', '192.0.2.1']);
    assertUp(r);
    assert.deepEqual(r.fields?.missing, []);
    assert.deepEqual(r.fields?.unexpected, []);
  });

  it('a removed record (expected, not answered) is down and listed as missing', async () => {
    const r = await expectRecords('example.com', 'A', ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
    assertDown(r, 'missing: 192.0.2.3');
    assert.deepEqual(r.fields?.missing, ['192.0.2.3']);
    assert.deepEqual(r.fields?.unexpected, []);
  });

  it('an added record (answered, not expected) is down and listed as unexpected', async () => {
    const r = await expectRecords('example.com', 'A', ['192.0.2.1']);
    assertDown(r, 'unexpected: 192.0.2.2');
    assert.deepEqual(r.fields?.missing, []);
    assert.deepEqual(r.fields?.unexpected, ['192.0.2.2']);
  });

  it('a changed record is down with both missing and unexpected', async () => {
    const r = await expectRecords('example.com', 'MX', ['10 mail.example.com', '30 backup.example.com']);
    assertDown(r, 'missing: 30 backup.example.com; unexpected: 20 backup.example.com');
    assert.deepEqual(r.fields?.missing, ['30 backup.example.com']);
    assert.deepEqual(r.fields?.unexpected, ['20 backup.example.com']);
  });

  it('names compare case-insensitively with optional trailing dot', async () => {
    assertUp(await expectRecords('example.com', 'NS', ['NS1.EXAMPLE.COM.', 'ns2.example.com']));
    assertUp(await expectRecords('www.example.com', 'CNAME', ['WEB.example.com.']));
    assertUp(await expectRecords('_sip._tcp.example.com', 'SRV', ['10 60 5060 SIP.Example.com.']));
    assertUp(await expectRecords('192.0.2.10', 'PTR', ['Host10.Example.Com.']));
  });

  it('addresses compare by value (full IPv6 form, zone-file leading zeros)', async () => {
    assertUp(await expectRecords('example.com', 'AAAA', ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:DB8::1:0:0:1']));
    assertUp(await expectRecords('example.com', 'A', ['192.000.002.001', '192.0.2.002']));
  });

  it('the aliases are not part of an exact set', async () => {
    const r = await expectRecords('www.example.com', 'A', ['192.0.2.80']);
    assertUp(r);
    assert.deepEqual(r.fields?.aliases, ['web.example.com']);
  });

  it('TXT compares exactly, zone-file quoted strings accepted', async () => {
    assertUp(await expectRecords('example.com', 'TXT', ['v=spf1 include:_spf.example.net ~all', 'hello']));
    assertUp(await expectRecords('example.com', 'TXT', ['"v=spf1 include:_spf.example.net" " ~all"', '"hello"']));
    // Text that is itself quoted matches the value as answers show it, and its zone-file escape too.
    assert.deepEqual(answersOf(await probe({ domain: 'quoted.example.com', record_type: 'TXT' })), ['"a" "b"', '"quoted"']);
    assertUp(await expectRecords('quoted.example.com', 'TXT', ['"quoted"', '"a" "b"']));
    assertUp(await expectRecords('quoted.example.com', 'TXT', ['"\\"quoted\\""', '"a" "b"']));
    const r = await expectRecords('example.com', 'TXT', ['v=spf1 include:_spf.example.net ~all', 'HELLO']);
    assertDown(r, /missing: HELLO; unexpected: hello/);
  });

  it('CAA: the answer form, the unquoted form and tag case all compare equal', async () => {
    assertUp(await expectRecords('example.com', 'CAA', ['0 issue "letsencrypt.org"', '128 iodef "mailto:security@example.com"']));
    assertUp(await expectRecords('example.com', 'CAA', ['0 ISSUE letsencrypt.org', '128 iodef mailto:security@example.com']));
    const r = await expectRecords('example.com', 'CAA', ['0 issue "pki.goog"', '128 iodef "mailto:security@example.com"']);
    assertDown(r, /missing: 0 issue "pki.goog"; unexpected: 0 issue "letsencrypt.org"/);
  });

  it('SOA: an exact value passes; a changed serial is down', async () => {
    assertUp(await expectRecords('example.com', 'SOA', ['NS1.example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 300']));
    const r = await expectRecords('example.com', 'SOA', ['ns1.example.com hostmaster.example.com 2024010102 7200 3600 1209600 300']);
    assert.equal(r.status, 'down');
    assert.deepEqual(r.fields?.unexpected, ['ns1.example.com hostmaster.example.com 2024010101 7200 3600 1209600 300']);
  });

  it('an empty answer with expected_records is down with every value missing', async () => {
    const r = await expectRecords('nosuch.example.com', 'A', ['192.0.2.1']);
    assertDown(r, 'NXDOMAIN');
    assert.deepEqual(r.fields?.missing, ['192.0.2.1']);
    assert.deepEqual(r.fields?.unexpected, []);
  });

  it('an empty expected_records list equals none', async () => {
    const r = await expectRecords('example.com', 'A', []);
    assertUp(r);
    assert.equal('missing' in (r.fields ?? {}), false);
  });

  it('a truncated answer is compared in full after the TCP retry', async () => {
    const all = Array.from({ length: BIG_COUNT }, (_, i) => `198.51.100.${i + 1}`);
    assertUp(await expectRecords('big.example.com', 'A', all));
  });
});

describe('dns probe: the MX bare-host rule', () => {
  it('a bare host stands for its record at any preference', async () => {
    assertUp(await probe({ domain: 'example.com', record_type: 'MX', expected_records: ['mail.example.com', 'Backup.Example.com.'] }));
  });

  it('a host answering at two preferences: the bare host takes the lowest, the rest are unexpected', async () => {
    const r = await probe({ domain: 'multi.example.com', record_type: 'MX', expected_records: ['mx1.example.com', 'mx2.example.com'] });
    assertDown(r, 'unexpected: 20 mx1.example.com');
    assert.deepEqual(r.fields?.missing, []);
    assert.deepEqual(r.fields?.unexpected, ['20 mx1.example.com']);
  });

  it('a bare host mixed with full values covers the whole set', async () => {
    assertUp(await probe({ domain: 'multi.example.com', record_type: 'MX', expected_records: ['10 mx1.example.com', '20 mx1.example.com', 'mx2.example.com'] }));
  });

  it('a bare host that does not answer is missing', async () => {
    const r = await probe({ domain: 'example.com', record_type: 'MX', expected_records: ['mail.example.com', 'backup.example.com', 'mx9.example.com'] });
    assertDown(r, 'missing: mx9.example.com');
    assert.deepEqual(r.fields?.missing, ['mx9.example.com']);
    assert.deepEqual(r.fields?.unexpected, []);
  });
});
