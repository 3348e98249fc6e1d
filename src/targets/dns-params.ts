// DNS check parameters at write time (monitoring-api.md, "Check specs" → `dns`, rules 1 and 4;
// "Errors" → INVALID_DNS_PARAMS): the queried name, the resolver, and the expected record set.
// Pure functions; every refusal is 400 INVALID_DNS_PARAMS naming the field. `normaliseRecord` is
// also the comparison form the DNS probe uses (names lower case without trailing dot, addresses by
// value, numbers without leading zeros, TXT exact after joining zone-file quoted strings).
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { AppError } from '../shared/errors.js';
import { EXPECTED_RECORD_MAX_LENGTH, EXPECTED_RECORDS_MAX, type DnsRecordType } from './constants.js';

/** The dns check fields these rules read (a `DnsCheck` satisfies it). */
export interface DnsParams {
  domain: string;
  record_type: DnsRecordType;
  resolver?: string | null;
  expected_contains?: string | null;
  expected_records?: string[] | null;
}

export const dnsError = (field: string, message: string): AppError =>
  new AppError(400, 'INVALID_DNS_PARAMS', `${field}: ${message}`, { field });

const MAX_NAME = 253;
const MAX_LABEL = 63;
const LABEL = /^[a-z0-9_-]+$/;

/** Outcome of a parse that reports its reason instead of throwing (callers pick the field). */
type Parsed = { ok: true; value: string } | { ok: false; reason: string };
const ok = (value: string): Parsed => ({ ok: true, value });
const bad = (reason: string): Parsed => ({ ok: false, reason });

/**
 * A host name in its stored/compared form: lower case, ASCII (IDN converted), no trailing dot.
 * Labels 1..63 of letters, digits, hyphen, underscore; total at most 253. `wildcard` allows a
 * leftmost `*` label. Does not judge addresses (see `normaliseQueryName`).
 */
export function parseName(input: string, wildcard: boolean): Parsed {
  let name = input;
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '') return bad('is empty');
  let prefix = '';
  if (wildcard && (name === '*' || name.startsWith('*.'))) {
    if (name === '*') return bad('a wildcard needs a parent name (*.example.com)');
    prefix = '*.';
    name = name.slice(2);
  }
  if (name.includes('*')) return bad(wildcard ? '`*` is allowed only as the whole leftmost label' : 'must not contain `*`');
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(name)) {
    const ascii = domainToASCII(name);
    if (ascii === '') return bad('is not a valid internationalised domain name');
    name = ascii;
  }
  name = name.toLowerCase();
  const labels = name.split('.');
  for (const label of labels) {
    if (label === '') return bad('has an empty label');
    if (label.length > MAX_LABEL) return bad(`has a label longer than ${MAX_LABEL} characters`);
    if (!LABEL.test(label)) return bad('labels may hold only letters, digits, hyphen and underscore');
    if (label.startsWith('xn--') && domainToASCII(label) === '') return bad(`has an invalid xn-- label ${label}`);
  }
  const full = prefix + name;
  if (full.length > MAX_NAME) return bad(`is longer than ${MAX_NAME} characters`);
  return ok(full);
}

/** Normalises a domain name (trailing dot, case, IDN); throws INVALID_DNS_PARAMS naming `field`. */
export function normaliseDomain(input: string, field = 'check.domain', opts: { wildcard?: boolean } = {}): string {
  const parsed = parseName(input.trim(), opts.wildcard ?? true);
  if (!parsed.ok) throw dnsError(field, `domain ${parsed.reason}`);
  return parsed.value;
}

/** An address without brackets or zone, or null when `s` is not one. */
function addressOf(s: string): string | null {
  const bare = /^\[(.*)\]$/.exec(s)?.[1] ?? s;
  if (bare.includes('%')) return null;
  return isIP(bare) === 0 ? null : bare;
}

/** The reverse-lookup name of an address: `1.2.0.192.in-addr.arpa` or the `ip6.arpa` nibble form. */
export function reverseName(address: string): string {
  if (isIPv4(address)) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  if (isIPv6(address) && !address.includes('%')) {
    const nibbles = ipaddr.IPv6.parse(address).parts.map((p) => p.toString(16).padStart(4, '0')).join('').split('');
    return `${nibbles.reverse().join('.')}.ip6.arpa`;
  }
  throw dnsError('check.domain', `${address} is not an IP address`);
}

/**
 * The name a dns check queries, normalised (rule 1): PTR turns an address into its reverse name
 * and takes a name (reverse or not) as is; every other type refuses an address.
 */
export function normaliseQueryName(domain: string, recordType: DnsRecordType): string {
  const trimmed = domain.trim();
  const address = addressOf(trimmed) ?? addressOf(trimmed.replace(/\.$/, ''));
  if (address !== null) {
    if (recordType !== 'PTR') throw dnsError('check.domain', `record type ${recordType} refuses an address; query PTR to look an address up`);
    return reverseName(address);
  }
  const name = normaliseDomain(trimmed, 'check.domain', { wildcard: true });
  if (addressOf(name.replace(/^\*\./, '')) !== null) {
    // An internationalised spelling of an address (for example full-width digits).
    if (recordType !== 'PTR' || name.startsWith('*.')) throw dnsError('check.domain', `record type ${recordType} refuses an address`);
    return reverseName(name);
  }
  return name;
}

export interface Resolver { address: string; port: number }

/** `ip` or `ip:port` (IPv6 as `[addr]:port`, `[addr]` or the bare address); port 1..65535, default 53. */
export function parseResolver(resolver: string): Resolver {
  const s = resolver.trim();
  const refuse = (why: string): AppError => dnsError('check.resolver', `resolver ${why}; expected ip or ip:port`);
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]*)\](?::([^:]*))?$/.exec(s);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2];
    if (!isIPv6(host) || host.includes('%')) throw refuse('brackets must hold an IPv6 address');
  } else if (isIPv6(s)) {
    if (s.includes('%')) throw refuse('must not carry an IPv6 zone');
    host = s;
  } else {
    const m = /^([^:]*)(?::([^:]*))?$/.exec(s);
    host = m?.[1] ?? '';
    portText = m?.[2];
    if (!isIPv4(host)) throw refuse('must be an IP address');
  }
  let port = 53;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText)) throw refuse('port must be a number');
    port = Number(portText);
    if (port < 1 || port > 65535) throw refuse('port must be 1..65535');
  }
  return { address: host, port };
}

// ---- record values --------------------------------------------------------------------------

/** An unsigned integer in decimal, leading zeros accepted, at most `max`; null otherwise. */
function uint(text: string | undefined, max: number): number | null {
  if (text === undefined || !/^\d+$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) && n <= max ? n : null;
}

/** A host name inside a record value: no wildcard, not an address; `.` (the root) when `root`. */
function recordHost(text: string | undefined, what: string, root = false): Parsed {
  if (text === undefined || text === '') return bad(`needs ${what}`);
  if (root && text === '.') return ok('.');
  if (addressOf(text.replace(/\.$/, '')) !== null) return bad(`${what} must be a host name, not an address`);
  const parsed = parseName(text, false);
  if (!parsed.ok) return bad(`${what} ${parsed.reason}`);
  // A host name's top-level label is never all digits (RFC 3696 §2); this also keeps `10` from passing as an MX host.
  if (/^\d+$/.test(parsed.value.split('.').pop() ?? '')) return bad(`${what} must be a host name (its last label is numeric)`);
  return parsed;
}

/** Decodes one zone-file quoted string body: `\"`, `\\` and `\DDD` escapes. */
function unescapeQuoted(body: string): string {
  return body.replace(/\\(\d{3}|.)/g, (_, e: string) => (/^\d{3}$/.test(e) ? String.fromCharCode(Number(e)) : e));
}

const QUOTED = /"((?:[^"\\]|\\.)*)"/g;
const QUOTED_SEQUENCE = /^\s*"(?:[^"\\]|\\.)*"(?:\s+"(?:[^"\\]|\\.)*")*\s*$/;

/** TXT: any text; zone-file quoted strings (`"a" "b"`) are joined (`ab`); otherwise exact. */
function txtValue(value: string): string {
  if (!QUOTED_SEQUENCE.test(value)) return value;
  return [...value.matchAll(QUOTED)].map((m) => unescapeQuoted(m[1] ?? '')).join('');
}

function fields(value: string): string[] {
  const t = value.trim();
  return t === '' ? [] : t.split(/\s+/);
}

function mx(value: string): Parsed {
  const f = fields(value);
  if (f.length === 1) {
    const host = recordHost(f[0], 'an MX host', true);
    return host.ok ? host : bad(`${host.reason}; expected "preference host" or a bare host`);
  }
  if (f.length !== 2) return bad('expected "preference host" or a bare host');
  const pref = uint(f[0], 65535);
  if (pref === null) return bad('MX preference must be 0..65535');
  const host = recordHost(f[1], 'an MX host', true);
  return host.ok ? ok(`${pref} ${host.value}`) : host;
}

function soa(value: string): Parsed {
  const f = fields(value);
  if (f.length !== 7) return bad('expected "mname rname serial refresh retry expire minimum"');
  const mname = recordHost(f[0], 'an SOA mname', true);
  if (!mname.ok) return mname;
  const rname = recordHost(f[1], 'an SOA rname', true);
  if (!rname.ok) return rname;
  const numbers = f.slice(2).map((n) => uint(n, 4294967295));
  if (numbers.some((n) => n === null)) return bad('SOA serial, refresh, retry, expire and minimum must be 0..4294967295');
  return ok([mname.value, rname.value, ...numbers].join(' '));
}

function caa(value: string): Parsed {
  const m = /^\s*(\S+)\s+(\S+)\s+(.*?)\s*$/.exec(value);
  if (!m) return bad('expected "flags tag value"');
  const flags = uint(m[1], 255);
  if (flags === null) return bad('CAA flags must be 0..255');
  const tag = m[2] ?? '';
  if (!/^[A-Za-z0-9]+$/.test(tag)) return bad('CAA tag must be letters and digits');
  let v = m[3] ?? '';
  if (v.startsWith('"')) {
    const q = /^"((?:[^"\\]|\\.)*)"$/.exec(v);
    if (!q) return bad('CAA value has an unterminated quote');
    v = unescapeQuoted(q[1] ?? '');
  } else if (v === '') {
    return bad('expected "flags tag value"');
  }
  return ok(`${flags} ${tag.toLowerCase()} ${v}`);
}

function srv(value: string): Parsed {
  const f = fields(value);
  if (f.length !== 4) return bad('expected "priority weight port target"');
  const numbers = f.slice(0, 3).map((n) => uint(n, 65535));
  if (numbers.some((n) => n === null)) return bad('SRV priority, weight and port must be 0..65535');
  const target = recordHost(f[3], 'an SRV target', true);
  return target.ok ? ok(`${numbers.join(' ')} ${target.value}`) : target;
}

function ipv4Value(value: string): Parsed {
  // Dotted decimal; leading zeros are decimal (zone-file spelling), never octal.
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value.trim());
  const octets = m?.slice(1).map((o) => uint(o, 255));
  if (!octets || octets.some((o) => o === null)) return bad('an A value must be an IPv4 address');
  return ok(octets.join('.'));
}

function ipv6Value(value: string): Parsed {
  const v = value.trim();
  if (!isIPv6(v) || v.includes('%')) return bad('an AAAA value must be an IPv6 address');
  return ok(ipaddr.IPv6.parse(v).toString());
}

function parseRecord(type: DnsRecordType, value: string): Parsed {
  switch (type) {
    case 'A': return ipv4Value(value);
    case 'AAAA': return ipv6Value(value);
    case 'CNAME': case 'NS': case 'PTR': return recordHost(value.trim(), `a ${type} value`);
    case 'MX': return mx(value);
    case 'TXT': return ok(txtValue(value));
    case 'SOA': return soa(value);
    case 'CAA': return caa(value);
    case 'SRV': return srv(value);
    default: return bad(`unknown record type ${String(type)}`);
  }
}

/**
 * The comparison form of one record value of `type` (monitoring-api.md, dns rule 3): names lower
 * case without trailing dot (IDN as `xn--`), addresses by value, numbers without leading zeros,
 * TXT exact after joining quoted strings. Throws INVALID_DNS_PARAMS naming `field` when the value
 * is not in the type's form.
 */
export function normaliseRecord(type: DnsRecordType, value: string, field = 'check.expected_records'): string {
  const parsed = parseRecord(type, value);
  if (!parsed.ok) throw dnsError(field, parsed.reason);
  return parsed.value;
}

/**
 * The spec's size limits on `expected_records` (up to 50 values, each up to 2048 characters; an
 * empty value is no record). Checked here, not in the schema, so they answer INVALID_DNS_PARAMS.
 */
function checkRecordLimits(records: readonly string[]): void {
  if (records.length > EXPECTED_RECORDS_MAX) {
    throw dnsError('check.expected_records', `at most ${EXPECTED_RECORDS_MAX} values (got ${records.length})`);
  }
  records.forEach((value, i) => {
    if (value === '') throw dnsError(`check.expected_records[${i}]`, 'is empty');
    if ([...value].length > EXPECTED_RECORD_MAX_LENGTH) throw dnsError(`check.expected_records[${i}]`, `is longer than ${EXPECTED_RECORD_MAX_LENGTH} characters`);
  });
}

/**
 * Rule 4: `expected_records` and `expected_contains` exclude each other; at most 50 values of 1..2048
 * characters, every one in the type's form; no two values are the same record. Returns the list
 * to store (values as given), or null when there is none (an empty list equals none).
 */
export function checkExpectedRecords(type: DnsRecordType, records: readonly string[] | null | undefined, contains: string | null | undefined): string[] | null {
  if (records === undefined || records === null || records.length === 0) return null;
  if (contains !== undefined && contains !== null) {
    throw dnsError('check.expected_records', 'set either expected_records or expected_contains, not both');
  }
  checkRecordLimits(records);
  const seen = new Map<string, number>();
  const mxHosts: Array<{ host: string; bare: boolean; i: number }> = [];
  records.forEach((value, i) => {
    const field = `check.expected_records[${i}]`;
    const norm = normaliseRecord(type, value, field);
    const prior = seen.get(norm);
    if (prior !== undefined) throw dnsError(field, `duplicates check.expected_records[${prior}]`);
    seen.set(norm, i);
    if (type === 'MX') {
      // A bare host stands for that host at any preference, so it duplicates any value naming the host.
      const parts = norm.split(' ');
      const host = parts[parts.length - 1] ?? '';
      const bare = parts.length === 1;
      const clash = mxHosts.find((h) => h.host === host && (bare || h.bare));
      if (clash) throw dnsError(field, `duplicates check.expected_records[${clash.i}] (a bare MX host stands for any preference)`);
      mxHosts.push({ host, bare, i });
    }
  });
  return [...records];
}

/**
 * Every dns write-time rule; returns the check to store: domain normalised (PTR addresses as their
 * reverse name), resolver trimmed, `expected_records` null when empty (an empty list equals none).
 */
export function normaliseDnsCheck<T extends DnsParams>(check: T): T {
  const out: T = { ...check, domain: normaliseQueryName(check.domain, check.record_type) };
  if (check.resolver !== undefined && check.resolver !== null) {
    parseResolver(check.resolver);
    out.resolver = check.resolver.trim();
  }
  const records = checkExpectedRecords(check.record_type, check.expected_records, check.expected_contains);
  if (records === null) out.expected_records = null;
  return out;
}
