// Which addresses a monitor may reach (monitoring-api.md, Errors: "target address in a blocked
// range"). Range membership comes from ipaddr.js's classification, never from hand-written CIDR
// math; this file only decides which of its named ranges are reachable.
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** IPv4 ranges a monitor may reach: ordinary unicast plus the public anycast services. */
const ALLOWED_V4 = new Set(['unicast', 'as112', 'amt']);
/** IPv6 ranges reachable as they are. Every other named range is blocked (fail closed). */
const ALLOWED_V6 = new Set(['unicast', 'as112v6', 'amt']);
/**
 * IANA allocates global unicast from 2000::/3 alone. ipaddr.js's `unicast` is its catch-all, so an
 * address outside 2000::/3 that its table does not name (RFC 9780's dummy prefix 100:0:0:1::/64, or
 * a range newer than the library) is not taken for a public one.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** An IP literal or a host name, normalised as the WHATWG URL parser would. */
export type HostLiteral =
  | { kind: 'ipv4'; address: string }
  | { kind: 'ipv6'; address: string }
  | { kind: 'name'; name: string };

// Characters that would make `http://<host>/` parse as something other than a host.
const NOT_A_HOST = /[/\\?#@\s:[\]]/;
// A name's label in ASCII form: letters, digits, `_` (in use on some internal names) and inner `-`.
// The URL parser would also keep `{`, `!` or `*`, which no resolvable name holds.
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const NAME_MAX_LENGTH = 253;

/**
 * Recognises IP literals in every spelling a URL parser accepts (2130706433, 0177.0.0.1, 0x7f.1,
 * 127.1, `127.0.0.1.`), bracketed or bare IPv6, and names (lower case, IDNA ASCII, trailing dot
 * dropped). Returns null when the string is not a valid host (an empty label, a character no
 * resolvable name holds, a label over 63 or a name over 253 characters). An IPv4-mapped IPv6 literal
 * is the IPv4 address it carries. IPv6 zone ids are refused: URLs
 * cannot carry them and a zone only makes sense for link-local targets.
 */
export function parseHostLiteral(host: string): HostLiteral | null {
  const trimmed = host.trim();
  if (trimmed === '') return null;
  const bare = trimmed.startsWith('[') && trimmed.endsWith(']') ? trimmed.slice(1, -1) : null;
  if (bare !== null || trimmed.includes(':')) return parseIPv6Literal(bare ?? trimmed);
  if (NOT_A_HOST.test(trimmed)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${trimmed}/`).hostname;
  } catch {
    return null;
  }
  if (hostname === '') return null;
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) return { kind: 'ipv4', address: hostname };
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name.length > NAME_MAX_LENGTH || !name.split('.').every((label) => LABEL.test(label))) return null;
  return { kind: 'name', name };
}

function parseIPv6Literal(text: string): HostLiteral | null {
  if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return null;
  let address: string;
  try {
    // The URL serialiser gives the canonical (RFC 5952) form, including for `::a.b.c.d`.
    address = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  // `::ffff:a.b.c.d` is IPv4 on the wire: read as the address it carries, so an `ip_version` pin
  // and the result's `address` say what a connection to it is. Parsed from the canonical form:
  // ipaddr.js reads the IPv4-compatible `::a.b.c.d` (IPv6 traffic) as mapped too.
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return { kind: 'ipv4', address: parsed.toIPv4Address().toString() };
  return { kind: 'ipv6', address };
}

/**
 * The name of the blocked range `ip` falls in, or null when a monitor may reach it. An IPv4-mapped
 * address is the IPv4 address it carries (see parseHostLiteral); other embedding forms
 * (IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo) are judged by the IPv4 address they
 * carry, reported as e.g. `rfc6145/loopback`. Anything that is not an IP
 * literal is reported as `invalid` so a caller's mistake fails closed.
 */
export function blockedRangeOf(ip: string): string | null {
  const parsed = parseAddress(ip);
  if (parsed === null) return 'invalid';
  return parsed.kind() === 'ipv4' ? blockedV4(parsed as IPv4) : blockedV6(parsed as IPv6);
}

/** True when a monitor must not connect to `ip` (see blockedRangeOf). */
export function isBlockedAddress(ip: string): boolean {
  return blockedRangeOf(ip) !== null;
}

function parseAddress(ip: string): IPv4 | IPv6 | null {
  const zoneless = ip.replace(/%.*$/, '');
  const literal = parseHostLiteral(zoneless);
  if (literal === null || literal.kind === 'name') return null;
  return ipaddr.parse(literal.address);
}

function blockedV4(ip: IPv4): string | null {
  const range = ip.range();
  return ALLOWED_V4.has(range) ? null : range;
}

function blockedV6(ip: IPv6): string | null {
  const range = ip.range();
  const embedded = embeddedV4(ip, range);
  if (embedded !== null) {
    const inner = embedded.map(blockedV4).find((r) => r !== null);
    const label = range === 'unicast' ? 'ipv4Compatible' : range;
    return inner === undefined ? null : `${label}/${inner}`;
  }
  if (range === 'unicast' && !ip.match(GLOBAL_UNICAST_V6)) return 'notGlobalUnicast';
  return ALLOWED_V6.has(range) ? null : range;
}

/** The IPv4 addresses an IPv6 address stands for, or null when it embeds none. */
function embeddedV4(ip: IPv6, range: string): IPv4[] | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number): IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const tail = (): IPv4 => v4(p[6]!, p[7]!);
  switch (range) {
    case 'rfc6145':
      return [tail()];
    case 'rfc6052':
      // 64:ff9b::/96 carries a public IPv4 address; 64:ff9b:1::/48 is for local use only.
      return p[1] === 0xff9b && p[2] === 0 ? [tail()] : null;
    case '6to4':
      return [v4(p[1]!, p[2]!)];
    case 'teredo':
      // Server address in clear, client address XORed with all ones; either may be the peer.
      return [v4(p[2]!, p[3]!), v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
    default:
      // IPv4-compatible (::a.b.c.d, deprecated); `::` and `::1` keep their own ranges.
      return range === 'unicast' && p.slice(0, 6).every((x) => x === 0) ? [tail()] : null;
  }
}
