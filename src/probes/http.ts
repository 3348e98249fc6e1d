// The http probe (monitoring-api.md, "http"): one request over a fresh connection to an address the
// guard allowed (pinned, so the name is never resolved twice), redirects followed hop by hop with
// each hop re-checked and credentials and secrets sent only to the check's own origin, the status judged against
// `expected_status`, the body searched within a bounded read, all inside one `timeout` budget.
// Per-phase timings come from the socket's events.
import { request as httpRequest, type ClientRequestArgs, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, isIP, type LookupFunction, type NetConnectOpts, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { ResolvedAddress } from '../net/guard.js';
import type { HttpCheckT } from '../targets/check-specs.js';
import { DEFAULT_EXPECTED_STATUS } from '../targets/check-specs.js';
import { VERSION } from '../version.js';
import { describeError, FAMILY, withDeadline, type Deadline } from './outcome.js';
import type { PhaseTimings, Probe, ProbeContext, ProbeResult, SecretParts } from './types.js';

/** The body is read at most this far: enough for any health page, bounded for a hostile one. */
export const BODY_READ_LIMIT = 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const RATE_LIMITED = new Set([429, 503]);
/** Characters of a `Retry-After` header kept in a result's error (an HTTP date is 29). */
const RETRY_AFTER_SHOWN = 64;
const USER_AGENT = `Keepwatch/${VERSION} (uptime check)`;

type ExpectedStatus = NonNullable<HttpCheckT['expected_status']>;

// No agent: each request opens its own connection through `createConnection`, which Node calls
// with the request's options (host, port, `lookup`, `servername`, `rejectUnauthorized`) when no
// agent is given, and closes it after the answer (`Connection: close`). An Agent would only keep
// books on sockets never reused (`agent: false` even builds one per request). No keep-alive and no
// TLS session cache: every check connects and handshakes in full.
const CONNECT_HTTP = (options: ClientRequestArgs): Socket => createConnection(options as NetConnectOpts);
const CONNECT_HTTPS = (options: ClientRequestArgs): Socket => tlsConnect(options as ConnectionOptions);

export function statusAccepted(expected: ExpectedStatus, code: number): boolean {
  switch (expected.kind) {
    case 'exact': return code === expected.value;
    case 'range': return code >= expected.value.min && code <= expected.value.max;
    case 'one_of': return expected.value.includes(code);
  }
}

interface Attempt {
  statusCode: number;
  /** Its headers are read only when a redirect or a rate limit needs one: Node builds the object on first access. */
  response: IncomingMessage;
  /** The body read so far (at most BODY_READ_LIMIT bytes), when it was read. */
  body: Buffer | null;
  address: string;
  timings: PhaseTimings;
}

/** Request headers for the check's own origin: the spec's, then credentials (they win over a header of the same name). */
function requestHeaders(spec: HttpCheckT): Record<string, string> {
  const headers: Record<string, string> = {};
  const hasUserAgent = Object.keys(spec.headers).some((k) => k.toLowerCase() === 'user-agent');
  if (!hasUserAgent) headers['user-agent'] = USER_AGENT;
  Object.assign(headers, spec.headers);
  if (spec.basic_auth) headers.authorization = `Basic ${Buffer.from(`${spec.basic_auth[0]}:${spec.basic_auth[1]}`).toString('base64')}`;
  if (spec.bearer_token) headers.authorization = `Bearer ${spec.bearer_token}`;
  return headers;
}

/** Headers that carry credentials; whatever their case, they never leave the check's origin (as fetch and curl do). */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/**
 * One hop's headers: all of them at the check's own origin (scheme, host, port); elsewhere, all but
 * credentials and those holding a secret variable, which an open redirect would otherwise hand over.
 */
function hopHeaders(headers: Record<string, string>, url: URL, checkOrigin: string, secrets: SecretParts | undefined): Record<string, string> {
  if (url.origin === checkOrigin) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => {
    const lower = name.toLowerCase();
    return !CREDENTIAL_HEADERS.has(lower) && !secrets?.headers.has(lower);
  }));
}

/** A URL's host as a resolver or connect call takes it: IPv6 literals without brackets. */
const bareHost = (url: URL): string => (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname);

/** One request to one URL over a fresh connection to a guard-approved address. */
async function attempt(url: URL, method: string, headers: Record<string, string>, body: string | null,
  spec: HttpCheckT, readBody: boolean, ctx: ProbeContext, deadline: Deadline): Promise<Attempt> {
  const host = bareHost(url);
  const dnsStart = performance.now();
  const [address] = await ctx.guard.resolveForConnect(host, FAMILY[spec.ip_version]);
  const pinned = address as ResolvedAddress;
  const timings: PhaseTimings = {};
  if (!isIP(host)) timings.dns = performance.now() - dnsStart;
  const lookup: LookupFunction = (_name, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  const https = url.protocol === 'https:';
  const options: RequestOptions & { rejectUnauthorized?: boolean; servername?: string } = {
    method, headers, lookup, createConnection: https ? CONNECT_HTTPS : CONNECT_HTTP,
    // An IP literal goes straight to connect; a name goes through `lookup`, which answers the pinned address.
    hostname: isIP(host) ? pinned.address : host,
    port: url.port || (https ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    setHost: true,
    ...(https && { rejectUnauthorized: spec.verify_tls, ...(isIP(host) ? {} : { servername: host }) }),
  };
  if (body !== null && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) {
    options.headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  }

  return new Promise<Attempt>((settle, fail) => {
    const start = performance.now();
    let connectedAt = start;
    const req = (https ? httpsRequest : httpRequest)(options);
    // Aborting destroys the request; cheaper than handing a signal to http.request, which wraps it
    // for every request (measured by bench:checks).
    const done = deadline.onAbort((reason) => { req.destroy(reason instanceof Error ? reason : new Error('check aborted')); });
    const resolve = (attempt: Attempt): void => { done(); settle(attempt); };
    const reject = (err: unknown): void => { done(); fail(err); };
    req.once('socket', (socket: Socket) => {
      socket.once('connect', () => { connectedAt = performance.now(); timings.connect = connectedAt - start; });
      if (https) (socket as TLSSocket).once('secureConnect', () => { timings.tls = performance.now() - connectedAt; });
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const firstByteAt = performance.now();
      timings.first_byte = firstByteAt - (timings.tls !== undefined ? connectedAt + timings.tls : connectedAt);
      const finish = (bodyRead: Buffer | null): void => {
        timings.transfer = performance.now() - firstByteAt;
        res.destroy();
        resolve({ statusCode: res.statusCode ?? 0, response: res, body: bodyRead, address: pinned.address, timings });
      };
      if (!readBody) {
        // Destroying a response before its end makes Node build an ERR_STREAM_PREMATURE_CLOSE,
        // stack and all. A body that came whole with the headers (the parser is done with the
        // packet by the next microtask) is drained instead: 15-20 µs less client CPU a check,
        // measured. A body still arriving is not waited for.
        queueMicrotask(() => {
          if (!res.complete) return finish(null);
          res.once('end', () => finish(null));
          res.resume();
        });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= BODY_READ_LIMIT) finish(Buffer.concat(chunks).subarray(0, BODY_READ_LIMIT));
      });
      res.once('end', () => finish(Buffer.concat(chunks)));
      res.once('error', reject);
    });
    req.end(body ?? undefined);
  });
}

/** Where a redirect leads, and with which method and body (303, and 301/302 after POST, turn into GET). */
function nextHop(from: URL, res: Attempt, method: string, body: string | null): { url: URL; method: string; body: string | null } | string {
  const location = res.response.headers.location;
  if (!location) return `redirect ${res.statusCode} without a Location header`;
  let url: URL;
  try {
    url = new URL(location, from);
  } catch {
    return `redirect ${res.statusCode} to an invalid Location "${location.slice(0, 200)}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `redirect to a ${url.protocol} URL refused`;
  const toGet = res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST');
  return toGet ? { url, method: method === 'HEAD' ? 'HEAD' : 'GET', body: null } : { url, method, body };
}

/** Judges the final answer (rules 2: 429 and 503 are degraded unless accepted). */
function judge(spec: HttpCheckT, res: Attempt): Pick<ProbeResult, 'status' | 'error'> {
  const expected = spec.expected_status ?? DEFAULT_EXPECTED_STATUS;
  if (!statusAccepted(expected, res.statusCode)) {
    if (RATE_LIMITED.has(res.statusCode)) {
      // A seconds count or an HTTP date; a peer's longer header is not copied whole into the history.
      const retryAfter = res.response.headers['retry-after']?.slice(0, RETRY_AFTER_SHOWN);
      return { status: 'degraded', error: `rate-limited ${res.statusCode}${retryAfter ? ` (${retryAfter})` : ''}` };
    }
    return { status: 'down', error: `unexpected status ${res.statusCode}` };
  }
  if (spec.expected_body_contains != null) {
    const text = res.body?.toString('utf8') ?? '';
    if (!text.includes(spec.expected_body_contains)) {
      const within = (res.body?.length ?? 0) >= BODY_READ_LIMIT ? ` in the first ${BODY_READ_LIMIT} bytes` : '';
      return { status: 'down', error: `body does not contain "${spec.expected_body_contains.slice(0, 100)}"${within}` };
    }
  }
  return { status: 'up', error: null };
}

export const httpProbe: Probe<HttpCheckT> = async (spec, ctx) => {
  const started = performance.now();
  const headers = requestHeaders(spec);
  const readBody = spec.expected_body_contains != null;
  let url = new URL(spec.url);
  const checkOrigin = url.origin;
  let method: string = spec.method;
  let body = spec.body ?? null;
  let redirects = 0;
  const elapsed = () => performance.now() - started;
  return withDeadline(spec.timeout, ctx.signal, async (deadline) => {
    for (;;) {
      const res = await attempt(url, method, hopHeaders(headers, url, checkOrigin, ctx.secretParts), body, spec, readBody, ctx, deadline);
      const fields = { status_code: res.statusCode, final_url: shownUrl(url), redirects, address: res.address };
      if (spec.follow_redirects && REDIRECTS.has(res.statusCode) && !statusAcceptedExplicitly(spec, res.statusCode)) {
        if (redirects >= spec.max_redirects) {
          return { status: 'down', duration_ms: elapsed(), error: `too many redirects (more than ${spec.max_redirects})`, timings: res.timings, fields };
        }
        const hop = nextHop(url, res, method, body);
        if (typeof hop === 'string') return { status: 'down', duration_ms: elapsed(), error: hop, timings: res.timings, fields };
        // A 307 or 308 resends the body; one holding a secret goes to no other origin.
        if (hop.body !== null && ctx.secretParts?.body && hop.url.origin !== checkOrigin) {
          const error = `redirect ${res.statusCode} to another origin (${hop.url.origin}) not followed: the request body holds a secret variable`;
          return { status: 'down', duration_ms: elapsed(), error, timings: res.timings, fields };
        }
        ({ url, method, body } = hop);
        redirects++;
        continue;
      }
      const { status, error } = judge(spec, res);
      return { status, duration_ms: elapsed(), error, timings: res.timings, fields };
    }
  }, (err) => ({ status: 'down', duration_ms: elapsed(), error: describeError(err), fields: { final_url: shownUrl(url), redirects } }));
};

/**
 * A hop's URL as the history keeps it: without the `user:password@` a redirect's Location may
 * carry (never sent; refused in a check's own URL for the same reason).
 */
function shownUrl(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const shown = new URL(url.href);
  shown.username = '';
  shown.password = '';
  return shown.href;
}

/** A redirect the customer's `expected_status` names outright is the answer, not a hop. */
function statusAcceptedExplicitly(spec: HttpCheckT, code: number): boolean {
  const expected = spec.expected_status;
  return expected !== undefined && expected.kind !== 'range' && statusAccepted(expected, code);
}
