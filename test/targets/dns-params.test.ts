// DNS check parameters (monitoring-api.md, "Check specs" → dns, rules 1 and 4): pure functions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/shared/errors.js';
import {
  checkExpectedRecords, normaliseDnsCheck, normaliseDomain, normaliseQueryName, normaliseRecord, parseResolver, reverseName,
} from '../../src/targets/dns-params.js';

/** Asserts `fn` throws 400 INVALID_DNS_PARAMS naming `field`. */
function refused(fn: () => unknown, field: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof AppError, `not an AppError: ${String(e)}`);
    assert.equal(e.status, 400);
    assert.equal(e.code, 'INVALID_DNS_PARAMS');
    assert.equal(e.extra.field, field);
    return true;
  });
}

describe('dns params: domain', () => {
  it('tolerates surrounding whitespace and one trailing dot; stores lower case without the dot', () => {
    assert.equal(normaliseQueryName('  Example.COM.  ', 'A'), 'example.com');
    assert.equal(normaliseQueryName('example.com', 'A'), 'example.com');
    refused(() => normaliseQueryName('example.com..', 'A'), 'check.domain');
    refused(() => normaliseQueryName('.', 'A'), 'check.domain');
    refused(() => normaliseQueryName('   ', 'A'), 'check.domain');
  });

  it('allows underscore labels', () => {
    assert.equal(normaliseQueryName('_dmarc.Example.com', 'TXT'), '_dmarc.example.com');
    assert.equal(normaliseQueryName('_sip._tcp.example.com', 'SRV'), '_sip._tcp.example.com');
  });

  it('allows a leftmost * label only', () => {
    assert.equal(normaliseQueryName('*.Example.com.', 'A'), '*.example.com');
    for (const d of ['a.*.example.com', 'example.*', '*a.example.com', 'a*.example.com', '**.example.com', '*', '*.*.example.com']) {
      refused(() => normaliseQueryName(d, 'A'), 'check.domain');
    }
  });

  it('labels 1..63 characters, total at most 253, letters/digits/hyphen/underscore', () => {
    assert.equal(normaliseDomain(`${'a'.repeat(63)}.com`), `${'a'.repeat(63)}.com`);
    refused(() => normaliseDomain(`${'a'.repeat(64)}.com`), 'check.domain');
    refused(() => normaliseDomain('a..com'), 'check.domain');
    refused(() => normaliseDomain('.a.com'), 'check.domain');
    const name253 = `${Array(4).fill('a'.repeat(62)).join('.')}.a`; // 4*62 + 4 dots + 1 = 253
    assert.equal(name253.length, 253);
    assert.equal(normaliseDomain(name253), name253);
    assert.equal(normaliseDomain(`${name253}.`), name253);
    refused(() => normaliseDomain(`${name253}a`), 'check.domain');
    for (const d of ['exa mple.com', 'ex!ample.com', 'example.com/path', 'user@example.com', 'exa:mple.com']) {
      refused(() => normaliseDomain(d), 'check.domain');
    }
  });

  it('internationalised names are converted to ASCII; invalid ones refused', () => {
    assert.equal(normaliseQueryName('Bücher.de', 'A'), 'xn--bcher-kva.de');
    assert.equal(normaliseQueryName('xn--bcher-kva.de', 'A'), 'xn--bcher-kva.de');
    refused(() => normaliseQueryName('xn--zz.com', 'A'), 'check.domain');
    refused(() => normaliseQueryName('bü cher.de', 'A'), 'check.domain');
  });

  it('PTR turns an address into its reverse name and accepts the reverse name itself (rule 1)', () => {
    assert.equal(normaliseQueryName('192.0.2.1', 'PTR'), '1.2.0.192.in-addr.arpa');
    assert.equal(normaliseQueryName(' 192.0.2.1 ', 'PTR'), '1.2.0.192.in-addr.arpa');
    assert.equal(normaliseQueryName('2001:db8::1', 'PTR'), `${'1'}.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
    assert.equal(normaliseQueryName('2001:DB8::1', 'PTR'), reverseName('2001:0db8:0:0::1'));
    assert.equal(normaliseQueryName('[2001:db8::1]', 'PTR'), reverseName('2001:db8::1'));
    assert.equal(normaliseQueryName('1.2.0.192.In-Addr.Arpa.', 'PTR'), '1.2.0.192.in-addr.arpa');
    refused(() => normaliseQueryName('fe80::1%eth0', 'PTR'), 'check.domain');
  });

  it('every other record type refuses an address', () => {
    for (const type of ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'CAA', 'SRV'] as const) {
      refused(() => normaliseQueryName('192.0.2.1', type), 'check.domain');
      refused(() => normaliseQueryName('2001:db8::1', type), 'check.domain');
      refused(() => normaliseQueryName('192.0.2.1.', type), 'check.domain');
    }
  });
});

describe('dns params: resolver', () => {
  it('accepts ip and ip:port, IPv6 bare or bracketed', () => {
    assert.deepEqual(parseResolver('1.1.1.1'), { address: '1.1.1.1', port: 53 });
    assert.deepEqual(parseResolver('1.1.1.1:5353'), { address: '1.1.1.1', port: 5353 });
    assert.deepEqual(parseResolver('2606:4700:4700::1111'), { address: '2606:4700:4700::1111', port: 53 });
    assert.deepEqual(parseResolver('[2606:4700:4700::1111]:853'), { address: '2606:4700:4700::1111', port: 853 });
    assert.deepEqual(parseResolver('[2606:4700:4700::1111]'), { address: '2606:4700:4700::1111', port: 53 });
    assert.deepEqual(parseResolver('9.9.9.9:1'), { address: '9.9.9.9', port: 1 });
    assert.deepEqual(parseResolver('9.9.9.9:65535'), { address: '9.9.9.9', port: 65535 });
  });

  it('refuses host names, bad ports and other forms', () => {
    for (const r of ['dns.google', 'dns.google:53', '1.1.1.1:0', '1.1.1.1:65536', '1.1.1.1:', '1.1.1.1:x', '1.1.1.1:53:53',
      '[1.1.1.1]:53', '2606:4700::1111:53:', '[2606:4700::1111]:', '[2606:4700::1111]:70000', 'fe80::1%eth0', '[fe80::1%eth0]:53',
      '1.1.1', '256.1.1.1', '', 'udp://1.1.1.1']) {
      refused(() => parseResolver(r), 'check.resolver');
    }
  });
});

describe('dns params: expected_records', () => {
  it('expected_records with expected_contains is refused; empty list equals none', () => {
    refused(() => checkExpectedRecords('A', ['192.0.2.1'], 'x'), 'check.expected_records');
    assert.equal(checkExpectedRecords('A', [], 'x'), null);
    assert.equal(checkExpectedRecords('A', [], null), null);
    assert.equal(checkExpectedRecords('A', null, null), null);
    assert.equal(checkExpectedRecords('A', undefined, 'x'), null);
    assert.deepEqual(checkExpectedRecords('A', ['192.0.2.1', '192.0.2.2'], null), ['192.0.2.1', '192.0.2.2']);
  });

  it('values are stored as given (validated), the index names the bad value', () => {
    assert.deepEqual(checkExpectedRecords('MX', ['010 MX.example.com.'], undefined), ['010 MX.example.com.']);
    refused(() => checkExpectedRecords('A', ['192.0.2.1', 'nope'], null), 'check.expected_records[1]');
  });

  it('at most 50 values, each 1..2048 characters (the spec\'s limits, answered INVALID_DNS_PARAMS)', () => {
    const fifty = Array.from({ length: 50 }, (_, i) => `v${i}`);
    assert.equal(checkExpectedRecords('TXT', fifty, null)?.length, 50);
    assert.equal(checkExpectedRecords('TXT', ['x'.repeat(2048)], null)?.length, 1);
    refused(() => checkExpectedRecords('TXT', [...fifty, 'v50'], null), 'check.expected_records');
    refused(() => checkExpectedRecords('TXT', ['ok', 'x'.repeat(2049)], null), 'check.expected_records[1]');
    // Characters, not UTF-16 units: 2048 emoji are 4096 units.
    assert.equal(checkExpectedRecords('TXT', ['😀'.repeat(2048)], null)?.length, 1);
    refused(() => checkExpectedRecords('TXT', ['😀'.repeat(2049)], null), 'check.expected_records[0]');
    refused(() => checkExpectedRecords('TXT', ['ok', 'fine', ''], null), 'check.expected_records[2]');
  });

  it('duplicates are refused, compared in the normalised form', () => {
    refused(() => checkExpectedRecords('A', ['192.0.2.1', '192.0.2.1'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('AAAA', ['2001:db8::1', '2001:0db8:0:0::1'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('CNAME', ['a.example.com', 'A.Example.com.'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('MX', ['10 mx.example.com', '010 MX.example.com.'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('MX', ['10 mx.example.com', 'mx.example.com'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('MX', ['mx.example.com', '20 mx.example.com'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('TXT', ['"v=spf1 " "-all"', 'v=spf1 -all'], null), 'check.expected_records[1]');
    refused(() => checkExpectedRecords('NS', ['ns1.example.com', 'ns2.example.com', 'NS1.EXAMPLE.COM'], null), 'check.expected_records[2]');
    // Distinct values are fine.
    assert.equal(checkExpectedRecords('MX', ['10 mx.example.com', '20 mx.example.com', 'mx2.example.com'], null)?.length, 3);
    assert.equal(checkExpectedRecords('TXT', ['abc', 'ABC', 'abc '], null)?.length, 3);
  });
});

describe('dns params: record forms and normaliseRecord', () => {
  const bad = (type: Parameters<typeof normaliseRecord>[0], value: string): void => refused(() => normaliseRecord(type, value), 'check.expected_records');

  it('A: IPv4 by value, leading zeros decimal', () => {
    assert.equal(normaliseRecord('A', '192.0.2.1'), '192.0.2.1');
    assert.equal(normaliseRecord('A', '192.000.002.001'), '192.0.2.1');
    for (const v of ['2001:db8::1', '192.0.2', '256.0.0.1', 'example.com', '192.0.2.1.', '1.2.3.4.5', '0x7f.0.0.1']) bad('A', v);
  });

  it('AAAA: IPv6 by value', () => {
    assert.equal(normaliseRecord('AAAA', '2001:0db8:0:0::1'), normaliseRecord('AAAA', '2001:db8::1'));
    assert.equal(normaliseRecord('AAAA', '2001:DB8:0000:0000:0000:0000:0000:0001'), '2001:db8::1');
    for (const v of ['192.0.2.1', 'fe80::1%eth0', '2001:db8::g', 'example.com', '2001:db8:::1']) bad('AAAA', v);
  });

  it('CNAME, NS, PTR: host names, case-insensitive, optional trailing dot, xn-- accepted', () => {
    for (const type of ['CNAME', 'NS', 'PTR'] as const) {
      assert.equal(normaliseRecord(type, 'Host.Example.COM.'), 'host.example.com');
      assert.equal(normaliseRecord(type, 'host.example.com'), normaliseRecord(type, 'HOST.example.com.'));
      assert.equal(normaliseRecord(type, 'xn--bcher-kva.de'), 'xn--bcher-kva.de');
      assert.equal(normaliseRecord(type, 'bücher.de'), 'xn--bcher-kva.de');
      for (const v of ['192.0.2.1', 'a b.com', '*.example.com', 'host..example.com', 'xn--zz.com', '1 host.example.com']) bad(type, v);
    }
  });

  it('MX: "preference host" or a bare host; preference 0..65535 with leading zeros', () => {
    assert.equal(normaliseRecord('MX', '10 mx.example.com'), '10 mx.example.com');
    assert.equal(normaliseRecord('MX', '010  MX.Example.com.'), '10 mx.example.com');
    assert.equal(normaliseRecord('MX', '0 .'), '0 .');
    assert.equal(normaliseRecord('MX', 'mx.example.com.'), 'mx.example.com');
    assert.equal(normaliseRecord('MX', '65535 mx.example.com'), '65535 mx.example.com');
    for (const v of ['65536 mx.example.com', '-1 mx.example.com', 'x mx.example.com', '10', '10 mx.example.com extra', '10 192.0.2.1', '10 a b']) bad('MX', v);
  });

  it('TXT: any text, exact; zone-file quoted strings joined', () => {
    assert.equal(normaliseRecord('TXT', 'v=spf1 -all'), 'v=spf1 -all');
    assert.equal(normaliseRecord('TXT', '"v=spf1 " "-all"'), 'v=spf1 -all');
    assert.equal(normaliseRecord('TXT', '"a"'), 'a');
    assert.equal(normaliseRecord('TXT', '"say \\"hi\\"" "\\065"'), 'say "hi"A');
    assert.notEqual(normaliseRecord('TXT', 'Hello'), normaliseRecord('TXT', 'hello'));
    assert.notEqual(normaliseRecord('TXT', 'hello '), normaliseRecord('TXT', 'hello'));
    assert.equal(normaliseRecord('TXT', '"unterminated'), '"unterminated');
  });

  it('SOA: mname rname serial refresh retry expire minimum', () => {
    assert.equal(normaliseRecord('SOA', 'NS1.Example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 0300'),
      'ns1.example.com hostmaster.example.com 2024010101 7200 3600 1209600 300');
    for (const v of ['ns1.example.com hostmaster.example.com 1 2 3 4', 'ns1.example.com hostmaster.example.com 1 2 3 4 x',
      'ns1.example.com hostmaster.example.com 4294967296 2 3 4 5', '192.0.2.1 hostmaster.example.com 1 2 3 4 5', 'a b c d e f g h']) bad('SOA', v);
  });

  it('CAA: flags tag value, value optionally quoted', () => {
    assert.equal(normaliseRecord('CAA', '0 issue "letsencrypt.org"'), '0 issue letsencrypt.org');
    assert.equal(normaliseRecord('CAA', '000 ISSUE letsencrypt.org'), '0 issue letsencrypt.org');
    assert.equal(normaliseRecord('CAA', '128 iodef "mailto:security@example.com"'), '128 iodef mailto:security@example.com');
    assert.equal(normaliseRecord('CAA', '0 issue ";"'), '0 issue ;');
    assert.equal(normaliseRecord('CAA', '0 issue ""'), '0 issue ');
    for (const v of ['256 issue letsencrypt.org', '0 is-sue letsencrypt.org', '0 issue', 'x issue ca', '0 issue "open', 'issue letsencrypt.org']) bad('CAA', v);
  });

  it('SRV: priority weight port target', () => {
    assert.equal(normaliseRecord('SRV', '10 60 5060 SIP.Example.com.'), '10 60 5060 sip.example.com');
    assert.equal(normaliseRecord('SRV', '010 060 05060 sip.example.com'), '10 60 5060 sip.example.com');
    assert.equal(normaliseRecord('SRV', '0 0 0 .'), '0 0 0 .');
    for (const v of ['10 60 65536 sip.example.com', '10 60 sip.example.com', '10 60 5060 sip.example.com x', '10 60 5060 192.0.2.1', 'a 60 5060 sip.example.com']) bad('SRV', v);
  });
});

describe('dns params: the whole check', () => {
  it('normalises the domain, trims the resolver and stores an empty expected_records as none (null)', () => {
    const out = normaliseDnsCheck({ domain: ' WWW.Example.com. ', record_type: 'A', resolver: ' 1.1.1.1:53 ', expected_records: [] });
    assert.deepEqual(out, { domain: 'www.example.com', record_type: 'A', resolver: '1.1.1.1:53', expected_records: null });
    const ptr = normaliseDnsCheck({ domain: '192.0.2.1', record_type: 'PTR', expected_records: ['host.example.com.'] });
    assert.deepEqual(ptr, { domain: '1.2.0.192.in-addr.arpa', record_type: 'PTR', expected_records: ['host.example.com.'] });
  });

  it('raises the field of the first broken rule', () => {
    refused(() => normaliseDnsCheck({ domain: 'a.*.com', record_type: 'A' }), 'check.domain');
    refused(() => normaliseDnsCheck({ domain: 'example.com', record_type: 'A', resolver: 'dns.google' }), 'check.resolver');
    refused(() => normaliseDnsCheck({ domain: 'example.com', record_type: 'A', expected_records: ['192.0.2.1'], expected_contains: '192' }), 'check.expected_records');
    refused(() => normaliseDnsCheck({ domain: 'example.com', record_type: 'AAAA', expected_records: ['192.0.2.1'] }), 'check.expected_records[0]');
  });
});
