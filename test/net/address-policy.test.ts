import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockedRangeOf, isBlockedAddress, parseHostLiteral } from '../../src/net/address-policy.js';

// [address, blocked range or null when reachable]
const ADDRESSES: [string, string | null][] = [
  // IPv4 public
  ['8.8.8.8', null], ['1.1.1.1', null], ['93.184.216.34', null], ['100.63.255.255', null],
  ['100.128.0.0', null], ['172.15.255.255', null], ['172.32.0.0', null], ['198.17.255.255', null],
  ['198.20.0.0', null], ['223.255.255.255', null], ['192.175.48.1', null], ['192.52.193.1', null],
  // IPv4 blocked
  ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'], ['100.64.0.1', 'carrierGradeNat'], ['100.127.255.255', 'carrierGradeNat'],
  ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'], ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
  ['198.18.0.1', 'reserved'], ['198.19.255.255', 'reserved'], // benchmarking 198.18/15
  ['192.0.2.1', 'reserved'], ['198.51.100.7', 'reserved'], ['203.0.113.9', 'reserved'], // documentation
  ['192.0.0.8', 'reserved'], ['240.0.0.1', 'reserved'], ['192.88.99.1', 'reserved'],
  // IPv6 public
  ['2606:4700:4700::1111', null], ['2a00:1450:4001:80b::200e', null], ['2620:4f:8000::1', null],
  // IPv6 blocked
  ['::1', 'loopback'], ['::', 'unspecified'], ['fe80::1', 'linkLocal'], ['fe80::1%eth0', 'linkLocal'],
  ['febf:ffff::1', 'linkLocal'], ['fc00::1', 'uniqueLocal'], ['fd12:3456::1', 'uniqueLocal'],
  ['ff02::1', 'multicast'], ['fec0::1', 'deprecatedSiteLocal'], ['100::1', 'discard'],
  ['2001:db8::1', 'reserved'], ['3fff::1', 'reserved'], ['2001:2::1', 'benchmarking'],
  ['2001:20::1', 'orchid2'], ['64:ff9b:1::8.8.8.8', 'rfc6052'],
  // Outside 2000::/3, where IANA allocates no global unicast, though ipaddr.js names no range there
  ['100:0:0:1::1', 'notGlobalUnicast'], ['1::1', 'notGlobalUnicast'], ['4000::1', 'notGlobalUnicast'], ['e000::1', 'notGlobalUnicast'],
  // IPv4-mapped: the IPv4 address it carries
  ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'], ['::ffff:169.254.169.254', 'linkLocal'],
  ['::ffff:8.8.8.8', null], ['[::ffff:8.8.8.8]', null],
  // IPv4-compatible (deprecated) and IPv4-translated
  ['::127.0.0.1', 'ipv4Compatible/loopback'], ['::10.0.0.1', 'ipv4Compatible/private'],
  ['::0.0.0.2', 'ipv4Compatible/unspecified'], ['::8.8.8.8', null],
  ['::ffff:0:127.0.0.1', 'rfc6145/loopback'], ['::ffff:0:8.8.8.8', null],
  // NAT64 well-known prefix
  ['64:ff9b::127.0.0.1', 'rfc6052/loopback'], ['64:ff9b::a00:1', 'rfc6052/private'], ['64:ff9b::8.8.8.8', null],
  // 6to4: 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD
  ['2002:7f00:1::1', '6to4/loopback'], ['2002:c0a8:101::1', '6to4/private'], ['2002:808:808::1', null],
  // Teredo: server in clear, client XORed with ffff:ffff
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo/loopback'], // client 127.0.0.1
  ['2001:0:7f00:1:8000:63bf:f7f7:f7f7', 'teredo/loopback'], // server 127.0.0.1
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', null], // server 65.54.227.120, client 8.8.8.8
  // Other spellings of an address
  ['2130706433', 'loopback'], ['0x7f.1', 'loopback'], ['0177.0.0.1', 'loopback'], ['127.1', 'loopback'],
  ['[::1]', 'loopback'], ['0', 'unspecified'],
  // Not an address: fail closed
  ['example.com', 'invalid'], ['', 'invalid'], ['1.2.3.4.5', 'invalid'], ['::1::2', 'invalid'],
];

describe('blockedRangeOf / isBlockedAddress', () => {
  for (const [address, expected] of ADDRESSES) {
    it(`${JSON.stringify(address)} -> ${expected ?? 'allowed'}`, () => {
      assert.equal(blockedRangeOf(address), expected);
      assert.equal(isBlockedAddress(address), expected !== null);
    });
  }
});

// [input, expected literal or null when not a valid host]
const HOSTS: [string, ReturnType<typeof parseHostLiteral>][] = [
  ['127.0.0.1', { kind: 'ipv4', address: '127.0.0.1' }],
  ['2130706433', { kind: 'ipv4', address: '127.0.0.1' }],
  ['0177.0.0.1', { kind: 'ipv4', address: '127.0.0.1' }],
  ['0x7f.1', { kind: 'ipv4', address: '127.0.0.1' }],
  ['0x7F000001', { kind: 'ipv4', address: '127.0.0.1' }],
  ['127.1', { kind: 'ipv4', address: '127.0.0.1' }],
  ['10.1', { kind: 'ipv4', address: '10.0.0.1' }],
  ['192.168.257', { kind: 'ipv4', address: '192.168.1.1' }],
  ['127.0.0.1.', { kind: 'ipv4', address: '127.0.0.1' }],
  ['%31%32%37.0.0.1', { kind: 'ipv4', address: '127.0.0.1' }],
  ['0', { kind: 'ipv4', address: '0.0.0.0' }],
  [' 8.8.8.8 ', { kind: 'ipv4', address: '8.8.8.8' }],
  ['[::1]', { kind: 'ipv6', address: '::1' }],
  ['::1', { kind: 'ipv6', address: '::1' }],
  ['[0:0:0:0:0:0:0:1]', { kind: 'ipv6', address: '::1' }],
  // IPv4-mapped: IPv4 on the wire, so read as the address it carries.
  ['[::ffff:127.0.0.1]', { kind: 'ipv4', address: '127.0.0.1' }],
  ['::ffff:7f00:1', { kind: 'ipv4', address: '127.0.0.1' }],
  ['[::127.0.0.1]', { kind: 'ipv6', address: '::7f00:1' }], // IPv4-compatible (deprecated) is IPv6 traffic
  ['[2001:DB8::1]', { kind: 'ipv6', address: '2001:db8::1' }],
  ['localhost', { kind: 'name', name: 'localhost' }],
  ['localhost.', { kind: 'name', name: 'localhost' }],
  ['LocalHost', { kind: 'name', name: 'localhost' }],
  ['api.Example.com.', { kind: 'name', name: 'api.example.com' }],
  ['Bücher.example', { kind: 'name', name: 'xn--bcher-kva.example' }],
  ['4294967296', null], // past 32 bits
  ['1.2.3.4.5', null], ['09.0.0.1', null], ['foo.09', null],
  ['', null], ['.', null], ['a..b', null], ['exa mple.com', null],
  ['user@127.0.0.1', null], ['evil.com/127.0.0.1', null], ['evil.com#x', null], ['host:80', null],
  ['[::1', null], ['fe80::1%eth0', null], ['[127.0.0.1]', null],
  // Kept by the URL parser, held by no resolvable name.
  ['{{h}}', null], ['a{b}.com', null], ['ex!ample.com', null], ['*.example.com', null], ['-a.example', null], ['a-.example', null],
  [`${'a'.repeat(64)}.example`, null], [`${'a.'.repeat(127)}ab`, null],
  ['_service.example.com', { kind: 'name', name: '_service.example.com' }], ['a-b.example', { kind: 'name', name: 'a-b.example' }],
  [`${'a'.repeat(63)}.example`, { kind: 'name', name: `${'a'.repeat(63)}.example` }],
];

describe('parseHostLiteral', () => {
  for (const [input, expected] of HOSTS) {
    it(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseHostLiteral(input), expected);
    });
  }
});
