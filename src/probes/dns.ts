// The dns probe (monitoring-api.md, "Check specs" → `dns`, rules 2, 3 and 5; "Result status
// mapping"): one query with RD set to the resolver over UDP, retried over TCP when the answer is
// truncated, judged against `expected_contains` or the exact `expected_records` set. The process
// resolver is queried with the same wire code (its first server from node:dns), so the CNAME chain
// is seen the same way whichever resolver answers. Only the outer `timeout` (or an abort) is `error`;
// every other failure, the resolver's included, is `down`.
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
// The module object, not a named import: dns.setServers rebinds getServers on it, and a named
// ESM import of a builtin would keep the stale binding.
import dns from 'node:dns';
import { connect as netConnect, isIPv6 } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Static } from '@sinclair/typebox';
import dnsPacket, { type Answer, type DecodedPacket, type TxtData } from 'dns-packet';
import ipaddr from 'ipaddr.js';
import type { DnsCheck } from '../targets/check-specs.js';
import type { DnsRecordType } from '../targets/constants.js';
import { normaliseQueryName, normaliseRecord, parseResolver, type Resolver } from '../targets/dns-params.js';
import { CheckTimeoutError, describeError, withDeadline, type Deadline } from './outcome.js';
import type { Probe, ProbeContext, ProbeResult, ResultStatus } from './types.js';

export type DnsCheckT = Static<typeof DnsCheck>;

/** EDNS0 UDP payload we advertise: the DNS-flag-day size that avoids IP fragmentation. */
export const EDNS_UDP_SIZE = 1232;
/** A lost UDP datagram is resent this often until the check's deadline. */
const UDP_RETRANSMIT_MS = 1000;
/** Longest CNAME chain followed; a longer (or looping) one is cut here. */
const MAX_ALIASES = 16;
/** Errors quote record values; keep them a short reason, not a dump. */
const MAX_ERROR_LENGTH = 500;

/** dns-packet decodes the response code but its types omit it. */
type Response = DecodedPacket & { rcode?: string };

interface Query {
  id: number;
  name: string;
  type: DnsRecordType;
}

// ---- wire ---------------------------------------------------------------------------------------

/** A name as compared on the wire: case-insensitive, without the trailing dot. */
const nameKey = (name: string): string => (name === '.' ? '.' : name.replace(/\.$/, '').toLowerCase());

function encodeQuery(q: Query): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: q.id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: q.type, name: q.name, class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
  });
}

/** The response to `q` in `msg`, or null: undecodable, not a response, or another id/question (stray or spoofed). */
function responseTo(msg: Buffer, q: Query): Response | null {
  let res: Response;
  try {
    res = dnsPacket.decode(msg);
  } catch {
    return null;
  }
  const question = res.questions?.length === 1 ? res.questions[0] : undefined;
  if (res.type !== 'response' || res.id !== q.id || question === undefined) return null;
  if (nameKey(question.name) !== nameKey(q.name) || question.type !== q.type || (question.class ?? 'IN') !== 'IN') return null;
  return res;
}

/** Settles once: the first of answer, failure or abort wins, and `cleanup` always runs. */
function settleOnce<T>(deadline: Deadline, cleanup: () => void, executor: (done: (err: unknown, value?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let stopListening = (): void => {};
    const done = (err: unknown, value?: T): void => {
      if (settled) return;
      settled = true;
      stopListening();
      cleanup();
      if (err === null) resolve(value as T);
      else reject(err);
    };
    stopListening = deadline.onAbort((reason) => done(reason));
    if (!settled) executor(done);
  });
}

/** One query over UDP, resent every UDP_RETRANSMIT_MS, answered by the first matching datagram. */
function udpExchange(server: Resolver, wire: Buffer, q: Query, deadline: Deadline): Promise<Response> {
  const socket = createSocket(isIPv6(server.address) ? 'udp6' : 'udp4');
  let timer: NodeJS.Timeout | undefined;
  const cleanup = (): void => {
    clearInterval(timer);
    try { socket.close(); } catch { /* already closed after an error */ }
  };
  return settleOnce<Response>(deadline, cleanup, (done) => {
    socket.on('error', (err) => done(err));
    socket.on('message', (msg) => {
      const res = responseTo(msg, q);
      if (res !== null) done(null, res);
    });
    // A connected socket only hears from the resolver, and reports ICMP refusals as errors.
    socket.connect(server.port, server.address, () => {
      const send = (): void => socket.send(wire, (err) => { if (err) done(err); });
      send();
      timer = setInterval(send, UDP_RETRANSMIT_MS);
    });
  });
}

/** One query over TCP (two-byte length framing), for answers too big for UDP. */
function tcpExchange(server: Resolver, wire: Buffer, q: Query, deadline: Deadline): Promise<Response> {
  const socket = netConnect({ host: server.address, port: server.port });
  return settleOnce<Response>(deadline, () => socket.destroy(), (done) => {
    let buffered = Buffer.alloc(0);
    socket.on('error', (err) => done(err));
    socket.on('close', () => done(new Error('resolver closed the TCP connection without an answer')));
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const res = responseTo(buffered.subarray(2, 2 + length), q);
        buffered = buffered.subarray(2 + length);
        if (res !== null) return done(null, res);
      }
    });
    const length = Buffer.alloc(2);
    length.writeUInt16BE(wire.length);
    socket.write(Buffer.concat([length, wire]));
  });
}

/** The resolver's answer; a truncated UDP answer is asked again over TCP. */
async function exchange(server: Resolver, q: Query, deadline: Deadline): Promise<Response> {
  const wire = encodeQuery(q);
  const udp = await udpExchange(server, wire, q, deadline);
  return udp.flag_tc ? tcpExchange(server, wire, q, deadline) : udp;
}

/**
 * Where to send the query. A custom resolver is the customer's address, so the guard judges it
 * (blocked ranges refused); the process resolver is the operator's and is used as configured.
 */
async function resolverFor(spec: DnsCheckT, ctx: ProbeContext): Promise<Resolver> {
  if (spec.resolver != null) {
    const custom = parseResolver(spec.resolver);
    const [allowed] = await ctx.guard.resolveForConnect(custom.address);
    return { address: allowed?.address ?? custom.address, port: custom.port };
  }
  const first = dns.getServers()[0];
  if (first === undefined) throw new Error('no process resolver configured');
  return parseResolver(first);
}

// ---- answers ------------------------------------------------------------------------------------

/** A name as answers show it: lower case, no trailing dot (the root stays `.`). */
const hostText = (name: string): string => nameKey(name);

/** TXT: the strings of one record joined with no separator (rule 3), read as UTF-8. */
function txtText(data: TxtData): string {
  const parts = Array.isArray(data) ? data : [data];
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString('utf8');
}

/** A zone-file quoted string, so a CAA value reads back through normaliseRecord unchanged. */
const quoted = (text: string): string => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** One record's value as the result's `answers` shows it, or null for a record of another type. */
function shownValue(a: Answer, type: DnsRecordType): string | null {
  if (a.type !== type) return null;
  switch (a.type) {
    case 'A': return a.data;
    case 'AAAA': return ipaddr.IPv6.parse(a.data).toString();
    case 'CNAME': case 'NS': case 'PTR': return hostText(a.data);
    case 'MX': return `${a.data.preference ?? 0} ${hostText(a.data.exchange)}`;
    case 'TXT': return txtText(a.data);
    case 'SOA': {
      const s = a.data;
      return [hostText(s.mname), hostText(s.rname), s.serial ?? 0, s.refresh ?? 0, s.retry ?? 0, s.expire ?? 0, s.minimum ?? 0].join(' ');
    }
    case 'CAA': return `${a.data.flags ?? 0} ${a.data.tag.toLowerCase()} ${quoted(a.data.value)}`;
    case 'SRV': return `${a.data.priority ?? 0} ${a.data.weight ?? 0} ${a.data.port} ${hostText(a.data.target)}`;
    default: return null;
  }
}

interface Reading {
  rcode: string;
  answers: string[];
  aliases: string[];
}

/**
 * The CNAME chain from the queried name through the answer section (a CNAME query asks for the
 * alias itself, so it has none), and the names whose records answer the query.
 */
function aliasChain(res: Response, q: Query): { aliases: string[]; owners: Set<string> } {
  const owners = new Set([nameKey(q.name)]);
  const aliases: string[] = [];
  if (q.type === 'CNAME') return { aliases, owners };
  let current = nameKey(q.name);
  while (aliases.length < MAX_ALIASES) {
    const next = res.answers?.find((a) => a.type === 'CNAME' && nameKey(a.name) === current);
    if (next?.type !== 'CNAME' || owners.has(nameKey(next.data))) break;
    current = nameKey(next.data);
    aliases.push(current);
    owners.add(current);
  }
  return { aliases, owners };
}

function read(res: Response, q: Query): Reading {
  const { aliases, owners } = aliasChain(res, q);
  const answers: string[] = [];
  for (const a of res.answers ?? []) {
    // Only records owned by the queried name or its aliases answer the question.
    const shown = owners.has(nameKey(a.name)) ? shownValue(a, q.type) : null;
    if (shown !== null && !answers.includes(shown)) answers.push(shown);
  }
  return { rcode: res.rcode ?? 'NOERROR', answers, aliases };
}

// ---- judging ------------------------------------------------------------------------------------

/**
 * The comparison form of a value (dns-params' normaliseRecord). TXT answers are already the exact
 * text: reparsing would unquote one that merely looks like zone-file quoting.
 */
function comparable(type: DnsRecordType, value: string, isAnswer: boolean): string {
  if (type === 'TXT' && isAnswer) return value;
  try {
    return normaliseRecord(type, value);
  } catch {
    return value; // Not in the type's form (odd wire data): it can only equal itself.
  }
}

/** The MX host and preference of a comparison form (`pref host`, or a bare `host`). */
function mxParts(key: string): { preference: number | null; host: string } {
  const [first, second] = key.split(' ');
  return second === undefined ? { preference: null, host: first ?? '' } : { preference: Number(first), host: second };
}

/**
 * Rule 3: the exact set, order and TTL ignored. An MX bare host takes that host's record with the
 * lowest preference; the host's other records stay unexpected.
 */
export function compareRecords(type: DnsRecordType, expected: readonly string[], answers: readonly string[]): { missing: string[]; unexpected: string[] } {
  const unmatched = new Map<string, string>(answers.map((a) => [comparable(type, a, true), a]));
  const missing: string[] = [];
  const bareHosts: string[] = [];
  for (const value of expected) {
    const key = comparable(type, value, false);
    if (type === 'MX' && mxParts(key).preference === null) bareHosts.push(value);
    // A TXT value is first the text as `answers` shows it: a record whose text is itself quoted
    // (`"x"`) matches its shown form; the zone-file reading (`x`) comes second.
    else if (!(type === 'TXT' && unmatched.delete(value)) && !unmatched.delete(key)) missing.push(value);
  }
  for (const value of bareHosts) {
    const host = mxParts(comparable(type, value, false)).host;
    const lowest = [...unmatched.keys()]
      .map((key) => ({ key, ...mxParts(key) }))
      .filter((r) => r.host === host && r.preference !== null)
      .sort((a, b) => (a.preference ?? 0) - (b.preference ?? 0))[0];
    if (lowest === undefined) missing.push(value);
    else unmatched.delete(lowest.key);
  }
  return { missing, unexpected: [...unmatched.values()] };
}

interface Verdict {
  status: ResultStatus;
  error: string | null;
  matched: boolean;
  missing?: string[];
  unexpected?: string[];
}

const expectedRecordsOf = (spec: DnsCheckT): string[] | null =>
  spec.expected_records != null && spec.expected_records.length > 0 ? spec.expected_records : null;

const short = (text: string): string => (text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text);

/** A check that got no usable answer: with an exact set, every expected value is missing. */
function failure(spec: DnsCheckT, status: ResultStatus, error: string): Verdict {
  const expected = expectedRecordsOf(spec);
  return { status, error, matched: false, ...(expected && { missing: [...expected], unexpected: [] }) };
}

/** Rule 2 and 3, in that order: resolver failure, empty answer, then the expectation. */
function judge(spec: DnsCheckT, reading: Reading): Verdict {
  const expected = expectedRecordsOf(spec);
  const down = (error: string): Verdict => failure(spec, 'down', error);
  if (reading.rcode !== 'NOERROR' && reading.rcode !== 'NXDOMAIN') return down(reading.rcode);
  if (reading.answers.length === 0) return down(reading.rcode === 'NXDOMAIN' ? 'NXDOMAIN' : `no ${spec.record_type} records`);
  if (expected) {
    const { missing, unexpected } = compareRecords(spec.record_type, expected, reading.answers);
    const matched = missing.length === 0 && unexpected.length === 0;
    const parts = [missing.length > 0 && `missing: ${missing.join(', ')}`, unexpected.length > 0 && `unexpected: ${unexpected.join(', ')}`];
    const error = matched ? null : short(parts.filter((p) => p !== false).join('; '));
    return { status: matched ? 'up' : 'down', error, matched, missing, unexpected };
  }
  if (spec.expected_contains != null) {
    const needle = spec.expected_contains;
    // Rule 5: the aliases count for a substring match (they do not for an exact set).
    const matched = [...reading.answers, ...reading.aliases].some((v) => v.includes(needle));
    return { status: matched ? 'up' : 'down', error: matched ? null : short(`expected_contains "${needle}" not found`), matched };
  }
  return { status: 'up', error: null, matched: true };
}

function resultFields(spec: DnsCheckT, domain: string, reading: Reading | null, verdict: Verdict): Record<string, unknown> {
  return {
    domain,
    record_type: spec.record_type,
    answers: reading?.answers ?? [],
    ...(reading !== null && reading.aliases.length > 0 && { aliases: reading.aliases }),
    expected_contains: spec.expected_contains ?? null,
    matched: verdict.matched,
    ...(verdict.missing && { missing: verdict.missing, unexpected: verdict.unexpected }),
  };
}

/** The query name as stored (PTR addresses as their reverse name); the raw domain when it cannot be read. */
function queryName(spec: DnsCheckT): string {
  try {
    return normaliseQueryName(spec.domain, spec.record_type);
  } catch {
    return spec.domain.trim();
  }
}

export const dnsProbe: Probe<DnsCheckT> = async (spec, ctx) => {
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  const domain = queryName(spec);
  const failed = (status: ResultStatus, error: string): ProbeResult =>
    ({ status, duration_ms: elapsed(), error, fields: resultFields(spec, domain, null, failure(spec, status, error)) });
  return withDeadline(spec.timeout, ctx.signal, async (deadline) => {
    // Validated at write time; a bad name here (an unvalidated caller) is a failed check, not a throw.
    const name = normaliseQueryName(spec.domain, spec.record_type);
    const q: Query = { id: randomInt(0, 0x10000), name, type: spec.record_type };
    const server = await resolverFor(spec, ctx);
    const reading = read(await exchange(server, q, deadline), q);
    const verdict = judge(spec, reading);
    const duration = elapsed();
    return { status: verdict.status, duration_ms: duration, error: verdict.error, timings: { dns: duration }, fields: resultFields(spec, domain, reading, verdict) };
  }, (err) => {
    // Only the outer timeout (and a shutdown abort) is `error`; the resolver failing is `down`.
    const stopped = err instanceof CheckTimeoutError || ctx.signal?.aborted === true;
    return failed(stopped ? 'error' : 'down', describeError(err));
  });
};
