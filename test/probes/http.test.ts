// The http probe against real HTTP servers on 127.0.0.1 (monitoring-api.md, "http"): status
// variants, 429/503 as degraded, redirects hop by hop under the guard, the bounded body read,
// credentials and headers, the timeout budget, connect-time SSRF refusals.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { NetworkGuard, type ResolvedAddress } from '../../src/net/guard.js';
import { BODY_READ_LIMIT, httpProbe } from '../../src/probes/http.js';
import type { ProbeContext } from '../../src/probes/types.js';
import { RdapBootstrap } from '../../src/rdap/index.js';
import { HttpCheck, type HttpCheckT } from '../../src/targets/check-specs.js';
import { createCa, createLeaf, daysAfter } from '../helpers/certs.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const clock = { now: () => new Date() };
const rdap = new RdapBootstrap('file:///nonexistent', clock);
const open = new NetworkGuard({ allowPrivate: true });
const ctxOf = (guard: NetworkGuard = open): ProbeContext => ({ guard, rdap });

/** A check with the schema's defaults filled, as the store hands it to the probe. */
const check = (fields: Partial<HttpCheckT> & { url: string }): HttpCheckT => Value.Default(HttpCheck, { type: 'http', ...fields }) as HttpCheckT;

/** A guard that lets one made-up public name through to 127.0.0.1 and judges everything else as deployed (private refused). */
class FirstHopPublic extends NetworkGuard {
  constructor(private readonly name: string) { super({ allowPrivate: false }); }
  override resolveForConnect(host: string, family: 0 | 4 | 6 = 0): Promise<ResolvedAddress[]> {
    return host === this.name ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : super.resolveForConnect(host, family);
  }
}

describe('http probe', () => {
  let server: Server;
  let base: string;
  let port: number;
  const hits: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const routes = new Map<string, Handler>();
  const hung: IncomingMessage[] = [];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => { body += c; });
      req.on('end', () => {
        hits.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const route = routes.get(req.url!.split('?')[0]!);
        if (route) route(req, res, body);
        else { res.writeHead(404); res.end('nope'); }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    const reply = (code: number, body = '', headers: Record<string, string> = {}): Handler => (_q, res) => { res.writeHead(code, headers); res.end(body); };
    routes.set('/ok', reply(200, 'all good: keepwatch-ok'));
    routes.set('/error', reply(500, 'boom'));
    routes.set('/created', reply(201));
    routes.set('/limited', reply(429, '', { 'retry-after': '120' }));
    routes.set('/limited-long', reply(429, '', { 'retry-after': 'x'.repeat(5000) }));
    routes.set('/to-userinfo', reply(302, '', { location: `http://user:pw@127.0.0.1:${port}/echo-auth` }));
    routes.set('/echo-auth', (req, res) => { res.writeHead(200); res.end(String(req.headers.authorization ?? 'none')); });
    routes.set('/unavailable', reply(503));
    routes.set('/moved', reply(302, '', { location: '/hop' }));
    routes.set('/hop', reply(301, '', { location: `${base}/ok` }));
    routes.set('/loop', reply(302, '', { location: '/loop' }));
    routes.set('/see-other', reply(303, '', { location: '/echo' }));
    routes.set('/echo', (req, res, body) => { res.writeHead(200); res.end(`${req.method} ${body}`); });
    routes.set('/to-private', reply(302, '', { location: `http://127.0.0.1:${port}/secret` }));
    routes.set('/secret', reply(200, 'secret'));
    routes.set('/big', (_q, res) => { res.writeHead(200); res.write(Buffer.alloc(BODY_READ_LIMIT + 10, 'a')); res.end('NEEDLE'); });
    routes.set('/hang', (req) => { hung.push(req); /* never answers */ });
    routes.set('/trickle', (_q, res) => { res.writeHead(200, { 'content-length': '100' }); res.write('first bytes'); /* the rest never comes */ });
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a 2xx is up with the status code, the address and per-phase timings', async () => {
    const r = await httpProbe(check({ url: `${base}/ok` }), ctxOf());
    assert.equal(r.status, 'up');
    assert.equal(r.error, null);
    assert.deepEqual(r.fields, { status_code: 200, final_url: `${base}/ok`, redirects: 0, address: '127.0.0.1' });
    for (const phase of ['connect', 'first_byte', 'transfer'] as const) assert.equal(typeof r.timings?.[phase], 'number', phase);
    assert.equal(r.timings?.dns, undefined, 'an IP literal has no DNS phase');
    assert.ok(r.duration_ms >= 0);
  });

  it('outside the default 200-399 is down naming the status', async () => {
    const r = await httpProbe(check({ url: `${base}/error` }), ctxOf());
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'unexpected status 500');
  });

  it('expected_status exact, range and one_of decide', async () => {
    const cases: Array<[HttpCheckT['expected_status'], string, string]> = [
      [{ kind: 'exact', value: 201 }, '/created', 'up'],
      [{ kind: 'exact', value: 200 }, '/created', 'down'],
      [{ kind: 'range', value: { min: 500, max: 599 } }, '/error', 'up'],
      [{ kind: 'one_of', value: [200, 404] }, '/missing', 'up'],
      [{ kind: 'one_of', value: [200, 201] }, '/missing', 'down'],
    ];
    for (const [expected_status, path, status] of cases) {
      const r = await httpProbe(check({ url: `${base}${path}`, expected_status }), ctxOf());
      assert.equal(r.status, status, `${JSON.stringify(expected_status)} ${path}: ${r.error}`);
    }
  });

  it('429 and 503 are degraded with rate-limited <code> (Retry-After), unless expected_status accepts them', async () => {
    const limited = await httpProbe(check({ url: `${base}/limited` }), ctxOf());
    assert.deepEqual([limited.status, limited.error], ['degraded', 'rate-limited 429 (120)']);
    const unavailable = await httpProbe(check({ url: `${base}/unavailable` }), ctxOf());
    assert.deepEqual([unavailable.status, unavailable.error], ['degraded', 'rate-limited 503']);
    const long = await httpProbe(check({ url: `${base}/limited-long` }), ctxOf());
    assert.equal(long.error, `rate-limited 429 (${'x'.repeat(64)})`, 'a long Retry-After is cut to 64 characters');
    const accepted = await httpProbe(check({ url: `${base}/limited`, expected_status: { kind: 'one_of', value: [200, 429] } }), ctxOf());
    assert.deepEqual([accepted.status, accepted.error], ['up', null]);
    // The default (200..399) never holds them, so any range that does is the customer's own choice.
    const ranged = await httpProbe(check({ url: `${base}/unavailable`, expected_status: { kind: 'range', value: { min: 200, max: 599 } } }), ctxOf());
    assert.deepEqual([ranged.status, ranged.error], ['up', null]);
  });

  it('follows redirects hop by hop, relative and absolute, and counts them', async () => {
    const r = await httpProbe(check({ url: `${base}/moved` }), ctxOf());
    assert.equal(r.status, 'up', String(r.error));
    assert.deepEqual(r.fields, { status_code: 200, final_url: `${base}/ok`, redirects: 2, address: '127.0.0.1' });
  });

  it('a Location with user:password@ is followed without sending them, and final_url does not keep them', async () => {
    const r = await httpProbe(check({ url: `${base}/to-userinfo`, expected_body_contains: 'none' }), ctxOf());
    assert.equal(r.status, 'up', String(r.error));
    assert.equal(r.fields?.final_url, `${base}/echo-auth`);
  });

  it('follow_redirects false judges the redirect itself (302 is within 200-399)', async () => {
    const r = await httpProbe(check({ url: `${base}/moved`, follow_redirects: false }), ctxOf());
    assert.equal(r.status, 'up');
    assert.equal(r.fields?.status_code, 302);
  });

  it('more than max_redirects hops is down', async () => {
    const r = await httpProbe(check({ url: `${base}/loop`, max_redirects: 3 }), ctxOf());
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'too many redirects (more than 3)');
    assert.equal(r.fields?.redirects, 3);
  });

  it('a 303 after POST continues as GET without the body', async () => {
    const r = await httpProbe(check({ url: `${base}/see-other`, method: 'POST', body: 'payload', expected_body_contains: 'GET ' }), ctxOf());
    assert.equal(r.status, 'up', String(r.error));
    const first = hits.filter((h) => h.url === '/see-other').at(-1)!;
    assert.deepEqual([first.method, first.body], ['POST', 'payload']);
  });

  it('sends method, body, headers and credentials; a default User-Agent unless one is given', async () => {
    await httpProbe(check({ url: `${base}/echo`, method: 'PUT', body: '{"a":1}', headers: { 'X-Team': 'ops' }, basic_auth: ['user', 'pa:ss'] }), ctxOf());
    const hit = hits.at(-1)!;
    assert.deepEqual([hit.method, hit.body, hit.headers['x-team']], ['PUT', '{"a":1}', 'ops']);
    assert.equal(hit.headers.authorization, `Basic ${Buffer.from('user:pa:ss').toString('base64')}`);
    assert.match(hit.headers['user-agent']!, /^Keepwatch\//);
    await httpProbe(check({ url: `${base}/echo`, headers: { 'User-Agent': 'mine' }, bearer_token: 'tok-1' }), ctxOf());
    assert.deepEqual([hits.at(-1)!.headers.authorization, hits.at(-1)!.headers['user-agent']], ['Bearer tok-1', 'mine']);
  });

  it('expected_body_contains searches the body, read at most BODY_READ_LIMIT bytes', async () => {
    assert.equal((await httpProbe(check({ url: `${base}/ok`, expected_body_contains: 'keepwatch-ok' }), ctxOf())).status, 'up');
    const missing = await httpProbe(check({ url: `${base}/ok`, expected_body_contains: 'absent' }), ctxOf());
    assert.deepEqual([missing.status, missing.error], ['down', 'body does not contain "absent"']);
    const beyond = await httpProbe(check({ url: `${base}/big`, expected_body_contains: 'NEEDLE' }), ctxOf());
    assert.equal(beyond.status, 'down');
    assert.match(String(beyond.error), new RegExp(`in the first ${BODY_READ_LIMIT} bytes`));
  });

  it('without expected_body_contains the body is not waited for: headers, then a stalled body, is up at once', async () => {
    const started = Date.now();
    const r = await httpProbe(check({ url: `${base}/trickle`, timeout: 3000 }), ctxOf());
    assert.deepEqual([r.status, r.error], ['up', null]);
    assert.ok(Date.now() - started < 1500, 'settled without waiting for the rest of the body');
  });

  it('every check opens a connection of its own and asks the server to close it', async () => {
    const sockets = new Set<unknown>();
    const seen = (socket: unknown) => sockets.add(socket);
    server.on('connection', seen);
    try {
      const before = hits.length;
      for (let i = 0; i < 3; i++) assert.equal((await httpProbe(check({ url: `${base}/ok` }), ctxOf())).status, 'up');
      assert.equal(sockets.size, 3, 'no connection reused across checks');
      assert.deepEqual(hits.slice(before).map((h) => h.headers.connection), ['close', 'close', 'close']);
    } finally {
      server.off('connection', seen);
    }
  });

  it('the timeout is one budget for the whole check: a silent server is down at the deadline', async () => {
    const started = Date.now();
    const r = await httpProbe(check({ url: `${base}/hang`, timeout: 300 }), ctxOf());
    assert.deepEqual([r.status, r.error], ['down', 'timeout after 300 ms']);
    assert.ok(Date.now() - started < 2000, 'settled near the deadline');
    const req = hung.at(-1)!;
    if (!req.socket.destroyed) await new Promise((closed) => req.socket.once('close', closed));
    assert.ok(req.socket.destroyed, 'the timed-out request was torn down, not left open');
  });

  it('a closed port is down: connection refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const r = await httpProbe(check({ url: `http://127.0.0.1:${closedPort}/` }), ctxOf());
    assert.deepEqual([r.status, r.error], ['down', 'connection refused']);
  });

  it('SSRF at connect time: a loopback literal and a name resolving to 127.0.0.1 are refused before any request', async () => {
    const before = hits.length;
    const literal = await httpProbe(check({ url: `${base}/secret` }), ctxOf(new NetworkGuard({ allowPrivate: false })));
    assert.equal(literal.status, 'down');
    assert.match(String(literal.error), /blocked range/);
    const rebinding = new NetworkGuard({ allowPrivate: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const named = await httpProbe(check({ url: `http://status.example.com:${port}/secret` }), ctxOf(rebinding));
    assert.equal(named.status, 'down');
    assert.match(String(named.error), /status\.example\.com.*blocked range/);
    assert.equal(hits.length, before, 'no request reached the server');
  });

  it('SSRF per redirect hop: a public first hop redirecting to a private address is refused at the hop', async () => {
    const before = hits.filter((h) => h.url === '/secret').length;
    const r = await httpProbe(check({ url: `http://first-hop.example:${port}/to-private` }), ctxOf(new FirstHopPublic('first-hop.example')));
    assert.equal(r.status, 'down');
    assert.match(String(r.error), /127\.0\.0\.1.*blocked range/);
    assert.equal(hits.filter((h) => h.url === '/secret').length, before, 'the private hop was never requested');
    assert.ok(hits.some((h) => h.url === '/to-private' && h.headers.host === `first-hop.example:${port}`), 'the first hop went out with its own Host');
  });

  it('an IPv4-mapped literal connects over IPv4, as its address says, and may be pinned to ipv4', async () => {
    for (const ip_version of ['any', 'ipv4'] as const) {
      const r = await httpProbe(check({ url: `http://[::ffff:127.0.0.1]:${port}/ok`, ip_version }), ctxOf());
      assert.equal(r.status, 'up', `${ip_version}: ${r.error}`);
      assert.equal(r.fields?.address, '127.0.0.1');
    }
    const v6 = await httpProbe(check({ url: `http://[::ffff:127.0.0.1]:${port}/ok`, ip_version: 'ipv6' }), ctxOf());
    assert.equal(v6.status, 'down', 'no IPv6 address to reach');
  });

  it('a name is connected to the pinned address with its own Host header; ip_version filters families', async () => {
    const resolver = async (): Promise<ResolvedAddress[]> => [{ address: '127.0.0.1', family: 4 }];
    const guard = new NetworkGuard({ allowPrivate: true, resolver });
    const r = await httpProbe(check({ url: `http://app.example:${port}/ok` }), ctxOf(guard));
    assert.equal(r.status, 'up', String(r.error));
    assert.equal(typeof r.timings?.dns, 'number');
    assert.equal(hits.at(-1)!.headers.host, `app.example:${port}`);
    const v6 = await httpProbe(check({ url: `http://app.example:${port}/ok`, ip_version: 'ipv6' }), ctxOf(guard));
    assert.equal(v6.status, 'down');
    assert.match(String(v6.error), /host not found/);
  });
  it('https to a server that speaks plain HTTP is down with the TLS reason, not OpenSSL\'s whole error line', async () => {
    const r = await httpProbe(check({ url: `${base.replace('http:', 'https:')}/ok` }), ctxOf());
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'TLS: wrong version number (EPROTO)');
  });
});

describe('http probe: credentials stay at the check\'s origin across redirects', () => {
  let a: Server;
  let b: Server;
  let baseA: string;
  let baseB: string;
  const seen: Array<{ server: 'a' | 'b'; url: string; headers: IncomingMessage['headers'] }> = [];
  const listen = async (server: Server): Promise<string> => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  before(async () => {
    // Same host, another port: another origin (scheme, host and port all count).
    b = createServer((req, res) => {
      seen.push({ server: 'b', url: req.url!, headers: req.headers });
      if (req.url === '/back') { res.writeHead(302, { location: `${baseA}/landing` }); res.end(); return; }
      res.writeHead(200); res.end('b');
    });
    baseB = await listen(b);
    a = createServer((req, res) => {
      seen.push({ server: 'a', url: req.url!, headers: req.headers });
      if (req.url === '/away') { res.writeHead(302, { location: `${baseB}/landing` }); res.end(); return; }
      if (req.url === '/away-and-back') { res.writeHead(302, { location: `${baseB}/back` }); res.end(); return; }
      if (req.url === '/same') { res.writeHead(302, { location: '/landing' }); res.end(); return; }
      res.writeHead(200); res.end('a');
    });
    baseA = await listen(a);
  });
  after(async () => {
    for (const server of [a, b]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const at = (server: 'a' | 'b', url: string) => seen.filter((h) => h.server === server && h.url === url).at(-1)!.headers;
  const custom = { Cookie: 'session=s1', 'PROXY-Authorization': 'Basic cHJveHk6cA==', 'X-Api-Key': 'k1' };

  it('another origin gets no Authorization (bearer, basic or a header), Cookie or Proxy-Authorization; other headers go', async () => {
    const cases: Array<Partial<HttpCheckT>> = [
      { bearer_token: 'SECRET-TOKEN', headers: custom },
      { basic_auth: ['user', 'pass'], headers: custom },
      { headers: { ...custom, AUTHORIZATION: 'Token t1' } },
    ];
    for (const fields of cases) {
      const r = await httpProbe(check({ url: `${baseA}/away`, ...fields }), ctxOf());
      assert.equal(r.status, 'up', String(r.error));
      assert.equal(r.fields?.final_url, `${baseB}/landing`);
      assert.ok(at('a', '/away').authorization, 'the check\'s own origin got the credential');
      const hop = at('b', '/landing');
      assert.deepEqual([hop.authorization, hop.cookie, hop['proxy-authorization']], [undefined, undefined, undefined], JSON.stringify(fields));
      assert.equal(hop['x-api-key'], 'k1', 'other custom headers still go');
    }
  });

  it('a same-origin hop, or a hop back to the check\'s origin, keeps them', async () => {
    assert.equal((await httpProbe(check({ url: `${baseA}/same`, bearer_token: 'tok', headers: custom }), ctxOf())).status, 'up');
    const same = at('a', '/landing');
    assert.deepEqual([same.authorization, same.cookie, same['proxy-authorization']], ['Bearer tok', 'session=s1', 'Basic cHJveHk6cA==']);
    assert.equal((await httpProbe(check({ url: `${baseA}/away-and-back`, bearer_token: 'tok2' }), ctxOf())).status, 'up');
    assert.equal(at('b', '/back').authorization, undefined);
    assert.equal(at('a', '/landing').authorization, 'Bearer tok2');
  });
});

describe('http probe: a secret variable stays at the check\'s origin across redirects', () => {
  let a: Server;
  let b: Server;
  let baseA: string;
  let baseB: string;
  const seen: Array<{ server: 'a' | 'b'; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const listen = (name: 'a' | 'b', route: (url: string) => { code: number; location?: string }): Promise<[Server, string]> => new Promise((resolve) => {
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => { body += c; });
      req.on('end', () => {
        seen.push({ server: name, url: req.url!, headers: req.headers, body });
        const { code, location } = route(req.url!);
        res.writeHead(code, location ? { location } : {});
        res.end(name);
      });
    });
    server.listen(0, '127.0.0.1', () => resolve([server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`]));
  });

  before(async () => {
    [b, baseB] = await listen('b', () => ({ code: 200 }));
    [a, baseA] = await listen('a', (url) => {
      if (url === '/away') return { code: 302, location: `${baseB}/landing` };
      if (url === '/away-307') return { code: 307, location: `${baseB}/landing` };
      if (url === '/same-307') return { code: 307, location: '/landing' };
      return { code: 200 };
    });
  });
  after(async () => {
    for (const server of [a, b]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const last = (server: 'a' | 'b', url: string) => seen.filter((h) => h.server === server && h.url === url).at(-1)!;
  // The spec as the probe gets it: references substituted; `secretParts` says where a secret went.
  const secretHeader = { headers: new Set(['x-api-key']), body: false, values: ['s3cret'] };
  const secretBody = { headers: new Set<string>(), body: true, values: ['s3cret'] };

  it('another origin gets no header that holds a secret, whatever its case; plain headers go', async () => {
    const spec = check({ url: `${baseA}/away`, headers: { 'X-API-Key': 's3cret', 'X-Plain': 'p' } });
    const r = await httpProbe(spec, { ...ctxOf(), secretParts: secretHeader });
    assert.equal(r.status, 'up', String(r.error));
    assert.equal(last('a', '/away').headers['x-api-key'], 's3cret', 'the check\'s own origin got it');
    const hop = last('b', '/landing').headers;
    assert.deepEqual([hop['x-api-key'], hop['x-plain']], [undefined, 'p']);
    // The same header holding no secret follows the redirect, as any header does.
    await httpProbe(spec, ctxOf());
    assert.equal(last('b', '/landing').headers['x-api-key'], 's3cret');
  });

  it('a 307 or 308 to another origin is not followed with a body that holds a secret; at the origin, or with a plain body, it is', async () => {
    const atB = seen.filter((h) => h.server === 'b').length;
    const away = await httpProbe(check({ url: `${baseA}/away-307`, method: 'POST', body: 'token=s3cret' }), { ...ctxOf(), secretParts: secretBody });
    assert.equal(away.status, 'down');
    assert.equal(away.error, `redirect 307 to another origin (${baseB}) not followed: the request body holds a secret variable`);
    assert.equal(seen.filter((h) => h.server === 'b').length, atB, 'nothing reached the other origin');
    const same = await httpProbe(check({ url: `${baseA}/same-307`, method: 'POST', body: 'token=s3cret' }), { ...ctxOf(), secretParts: secretBody });
    assert.equal(same.status, 'up', String(same.error));
    assert.equal(last('a', '/landing').body, 'token=s3cret');
    const plain = await httpProbe(check({ url: `${baseA}/away-307`, method: 'POST', body: 'hello' }), ctxOf());
    assert.equal(plain.status, 'up', String(plain.error));
    assert.equal(last('b', '/landing').body, 'hello');
  });
});

describe('http probe over TLS', () => {
  let server: HttpsServer;
  let base: string;
  const reused: boolean[] = [];
  /** Names the made-up host 127.0.0.1, so SNI and the certificate's name are the test's. */
  const guard = new NetworkGuard({ allowPrivate: true, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });

  before(async () => {
    const pair = createLeaf({ commonName: 'probe.test', notAfter: daysAfter(new Date(), 30) });
    server = createHttpsServer(pair, (_req, res) => { res.writeHead(200); res.end('secure'); });
    server.on('secureConnection', (socket: TLSSocket) => reused.push(socket.isSessionReused()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://probe.test:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('verify_tls refuses a leaf whose issuer is unknown, naming the reason\'s code', async () => {
    const issued = createLeaf({ commonName: 'probe.test', notAfter: daysAfter(new Date(), 30), issuer: createCa('Unknown CA') });
    // The leaf alone, without its chain: the client cannot find who signed it.
    const leafOnly = issued.cert.slice(0, issued.cert.indexOf('-----END CERTIFICATE-----') + '-----END CERTIFICATE-----'.length);
    const orphan = createHttpsServer({ key: issued.key, cert: leafOnly }, (_req, res) => res.end('x'));
    await new Promise<void>((resolve) => orphan.listen(0, '127.0.0.1', resolve));
    try {
      const r = await httpProbe(check({ url: `https://probe.test:${(orphan.address() as AddressInfo).port}/` }), ctxOf(guard));
      assert.equal(r.status, 'down');
      assert.equal(r.error, 'TLS: unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)');
    } finally {
      orphan.closeAllConnections();
      await new Promise((resolve) => orphan.close(resolve));
    }
  });

  it('verify_tls refuses a self-signed certificate; without it the check is up with a tls phase', async () => {
    const verified = await httpProbe(check({ url: `${base}/`, verify_tls: true }), ctxOf(guard));
    assert.equal(verified.status, 'down');
    assert.match(String(verified.error), /^TLS: .*SELF_SIGNED/);
    const unverified = await httpProbe(check({ url: `${base}/`, verify_tls: false }), ctxOf(guard));
    assert.equal(unverified.status, 'up');
    assert.ok((unverified.timings?.tls ?? -1) >= 0, 'the handshake is timed');
  });

  it('every check handshakes in full: no TLS session is resumed from an earlier check', async () => {
    reused.length = 0;
    for (let i = 0; i < 3; i++) assert.equal((await httpProbe(check({ url: `${base}/`, verify_tls: false }), ctxOf(guard))).status, 'up');
    assert.deepEqual(reused, [false, false, false]);
  });
});
