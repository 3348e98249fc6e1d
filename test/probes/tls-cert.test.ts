// The tls_cert probe against real TLS servers on 127.0.0.1 with certificates made here
// (monitoring-api.md, "tls_cert" and "Result status mapping"): the leaf's not-after judged against
// warn_days / critical_days, any chain accepted, SNI from server_name or host, the JSON document in
// `error`, and `error` status for a handshake that cannot happen.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createSecureContext, createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { Value } from '@sinclair/typebox/value';
import { NetworkGuard } from '../../src/net/guard.js';
import { tlsCertProbe, type TlsCertCheckT } from '../../src/probes/tls-cert.js';
import type { ProbeContext, ProbeResult } from '../../src/probes/types.js';
import { RdapBootstrap } from '../../src/rdap/index.js';
import { TlsCertCheck } from '../../src/targets/check-specs.js';
import { createCa, createLeaf, daysAfter, type KeyAndCert } from '../helpers/certs.js';

/** The check's clock; certificates are dated relative to it (whole seconds, as X.509 stores them). */
const NOW = new Date('2026-03-01T12:00:00.000Z');
const CA_CN = 'Keepwatch Test CA';

const rdap = new RdapBootstrap('file:///nonexistent', { now: () => new Date() });
const open = new NetworkGuard({ allowPrivate: true });
const ctxOf = (guard: NetworkGuard = open): ProbeContext => ({ guard, rdap, now: () => NOW });
const check = (fields: Partial<TlsCertCheckT> & { port: number }): TlsCertCheckT =>
  Value.Default(TlsCertCheck, { type: 'tls_cert', host: '127.0.0.1', ...fields }) as TlsCertCheckT;
/** A guard that resolves the test's made-up names to 127.0.0.1 (Node itself could not). */
const namesGuard = new NetworkGuard({ allowPrivate: true, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });

/** The spec's document, parsed from `error`. */
function document(r: ProbeResult): Record<string, unknown> {
  assert.notEqual(r.error, null, 'error carries the JSON document');
  return JSON.parse(r.error!) as Record<string, unknown>;
}

async function listenOn(server: NetServer | TlsServer): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

const closeServer = (server: NetServer | TlsServer): Promise<unknown> => new Promise((resolve) => server.close(resolve));

describe('tls_cert probe', () => {
  // One server picks the certificate by SNI name, so every case also proves which name was sent.
  const certs = new Map<string, { pair: KeyAndCert; notAfter: Date; issuer: string }>();
  let server: TlsServer;
  let port: number;
  let connections = 0;
  const servernames: string[] = [];

  const addLeaf = (cn: string, days: number, selfSigned = false): void => {
    const notAfter = daysAfter(NOW, days);
    certs.set(cn, { pair: createLeaf({ commonName: cn, notAfter, ...(selfSigned ? {} : { issuer: ca }) }), notAfter, issuer: selfSigned ? cn : CA_CN });
  };
  const ca = createCa(CA_CN);

  before(async () => {
    addLeaf('default.test', 120.5);
    addLeaf('valid.test', 90.5);
    addLeaf('soon.test', 5.5);
    addLeaf('ten.test', 10.5);
    addLeaf('critical-edge.test', 7.25);
    addLeaf('warn-edge.test', 14.25);
    addLeaf('expired.test', -1.5);
    addLeaf('today.test', 0.25);
    addLeaf('self.test', 200.5, true);
    const contexts = new Map([...certs].map(([cn, c]) => [cn, createSecureContext(c.pair)]));
    server = createTlsServer({
      ...certs.get('default.test')!.pair,
      // Called only when the client sends SNI, and before the server's certificate goes out.
      SNICallback: (name, cb) => {
        servernames.push(name);
        const ctx = contexts.get(name);
        if (ctx) cb(null, ctx);
        else cb(new Error(`no certificate for ${name}`));
      },
    }, (socket: TLSSocket) => { socket.end(); });
    server.on('connection', () => { connections++; });
    server.on('tlsClientError', () => {});
    port = await listenOn(server);
  });
  after(() => closeServer(server));

  /** The document the spec describes, for a leaf made above. */
  const expected = (cn: string, days: number): Record<string, unknown> => ({
    days_remaining: days,
    not_after: certs.get(cn)!.notAfter.toISOString(),
    subject_common_name: cn,
    issuer_common_name: certs.get(cn)!.issuer,
  });

  it('a certificate with 90 days left is up; the document is in error and fields, with per-phase timings', async () => {
    const r = await tlsCertProbe(check({ port, server_name: 'valid.test' }), ctxOf());
    assert.equal(r.status, 'up');
    assert.deepEqual(document(r), expected('valid.test', 90));
    assert.deepEqual(r.fields, { ...expected('valid.test', 90), address: '127.0.0.1' });
    assert.equal(typeof r.timings?.connect, 'number');
    assert.equal(typeof r.timings?.tls, 'number');
    assert.equal(r.timings?.dns, undefined, 'an IP literal is not resolved');
  });

  it('5 days left with warn 14 / critical 7 is down (5 < 7)', async () => {
    const r = await tlsCertProbe(check({ port, server_name: 'soon.test', warn_days: 14, critical_days: 7 }), ctxOf());
    assert.equal(r.status, 'down');
    assert.deepEqual(document(r), expected('soon.test', 5));
  });

  it('10 days left with warn 14 / critical 7 is degraded', async () => {
    const r = await tlsCertProbe(check({ port, server_name: 'ten.test', warn_days: 14, critical_days: 7 }), ctxOf());
    assert.equal(r.status, 'degraded');
    assert.deepEqual(document(r), expected('ten.test', 10));
  });

  it('the thresholds are strict: exactly critical_days is degraded, exactly warn_days is up', async () => {
    const atCritical = await tlsCertProbe(check({ port, server_name: 'critical-edge.test', warn_days: 14, critical_days: 7 }), ctxOf());
    assert.equal(atCritical.status, 'degraded');
    assert.equal(document(atCritical).days_remaining, 7);
    const atWarn = await tlsCertProbe(check({ port, server_name: 'warn-edge.test', warn_days: 14, critical_days: 7 }), ctxOf());
    assert.equal(atWarn.status, 'up');
    assert.equal(document(atWarn).days_remaining, 14);
  });

  it('days are whole days rounded down: a certificate expiring later today has 0 and is down', async () => {
    const r = await tlsCertProbe(check({ port, server_name: 'today.test', warn_days: 2, critical_days: 1 }), ctxOf());
    assert.equal(r.status, 'down');
    assert.equal(document(r).days_remaining, 0);
  });

  it('an expired certificate is down with negative days (1.5 days ago rounds down to -2)', async () => {
    const r = await tlsCertProbe(check({ port, server_name: 'expired.test' }), ctxOf());
    assert.equal(r.status, 'down');
    assert.deepEqual(document(r), expected('expired.test', -2));
  });

  it('a self-signed certificate is still read: any chain is accepted', async () => {
    const r = await tlsCertProbe(check({ port, server_name: 'self.test' }), ctxOf());
    assert.equal(r.status, 'up');
    assert.deepEqual(document(r), expected('self.test', 200));
  });

  it('SNI defaults to host; server_name overrides it; the name is resolved through the guard only', async () => {
    servernames.length = 0;
    // "valid.test" has no system DNS answer: the connection can only go to the guard's pinned address.
    const byHost = await tlsCertProbe(check({ host: 'valid.test', port }), ctxOf(namesGuard));
    assert.equal(byHost.status, 'up', byHost.error ?? '');
    assert.equal(document(byHost).subject_common_name, 'valid.test');
    assert.equal(typeof byHost.timings?.dns, 'number');
    const overridden = await tlsCertProbe(check({ host: 'valid.test', port, server_name: 'soon.test' }), ctxOf(namesGuard));
    assert.equal(document(overridden).subject_common_name, 'soon.test');
    assert.deepEqual(servernames, ['valid.test', 'soon.test']);
  });

  it('an IP literal sends no SNI and gets the default certificate', async () => {
    servernames.length = 0;
    const r = await tlsCertProbe(check({ port }), ctxOf());
    assert.equal(document(r).subject_common_name, 'default.test');
    const literalName = await tlsCertProbe(check({ port, server_name: '127.0.0.1' }), ctxOf());
    assert.equal(document(literalName).subject_common_name, 'default.test');
    assert.deepEqual(servernames, [], 'the SNI callback never ran: no name was sent');
  });

  it('the guard refuses 127.0.0.1 at connect time: error with its message, and no connection reaches the server', async () => {
    const before = connections;
    const r = await tlsCertProbe(check({ port, server_name: 'valid.test' }), ctxOf(new NetworkGuard({ allowPrivate: false })));
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /^connection to 127\.0\.0\.1 refused by the network guard: /);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(connections, before);
  });

  it('the guard refuses a name that resolves to 127.0.0.1, and no connection reaches the server', async () => {
    const before = connections;
    const guard = new NetworkGuard({ allowPrivate: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const r = await tlsCertProbe(check({ host: 'shop.example.com', port }), ctxOf(guard));
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /^connection to shop\.example\.com refused by the network guard: every address is in a blocked range: 127\.0\.0\.1/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(connections, before);
  });
});

describe('tls_cert probe: no handshake', () => {
  let plain: NetServer;
  let plainPort: number;
  let silent: NetServer;
  let silentPort: number;
  let closedPort: number;
  let oldTls: TlsServer;
  let oldTlsPort: number;
  const accepted = new Set<Socket>();
  const track = (socket: Socket): void => {
    accepted.add(socket);
    socket.on('error', () => {}).on('close', () => accepted.delete(socket));
  };

  before(async () => {
    // Offers only TLS 1.1, below the client's floor: it answers the ClientHello with a protocol_version alert.
    oldTls = createTlsServer({ ...createLeaf({ commonName: 'old.test', notAfter: daysAfter(NOW, 90) }), maxVersion: 'TLSv1.1' });
    oldTls.on('tlsClientError', () => {});
    oldTlsPort = await listenOn(oldTls);
    // Speaks a plain-text protocol: the ClientHello gets a banner back, not a ServerHello.
    plain = createNetServer((socket) => { track(socket); socket.write('220 smtp.keepwatch.test ESMTP ready\r\n'); });
    plainPort = await listenOn(plain);
    // Accepts and never answers the handshake.
    silent = createNetServer(track);
    silentPort = await listenOn(silent);
    const closed = createNetServer();
    closedPort = await listenOn(closed);
    await closeServer(closed);
  });
  after(async () => {
    for (const socket of accepted) socket.destroy();
    await Promise.all([plain, silent, oldTls].map(closeServer));
  });

  it('a plain TCP server is a handshake failure: error with the TLS message', async () => {
    const r = await tlsCertProbe(check({ port: plainPort }), ctxOf());
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /^TLS: .*wrong version number/i);
    assert.equal(r.fields, undefined, 'no certificate, no days');
  });

  it('a TLS alert from the server is a handshake failure: error with the TLS message', async () => {
    const r = await tlsCertProbe(check({ port: oldTlsPort }), ctxOf());
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /^TLS: .*alert protocol version/i);
  });

  it('a server that never answers the handshake is error at the timeout', async () => {
    const t0 = performance.now();
    const r = await tlsCertProbe(check({ port: silentPort, timeout: 300 }), ctxOf());
    const took = performance.now() - t0;
    assert.equal(r.status, 'error');
    assert.equal(r.error, 'timeout after 300 ms');
    assert.ok(took >= 290 && took < 1500, `took ${took} ms`);
  });

  it('a refused connection is error too: no handshake could happen', async () => {
    const r = await tlsCertProbe(check({ port: closedPort }), ctxOf());
    assert.equal(r.status, 'error');
    assert.equal(r.error, 'connection refused');
  });
});
