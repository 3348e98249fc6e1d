// The tcp probe against real sockets on 127.0.0.1 (monitoring-api.md, "tcp"): connect is up, a
// refusal, the timeout budget or the connect-time guard is down; names are resolved once through
// the guard and the socket goes to the pinned address, each allowed address tried in order.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { NetworkGuard, type Resolver } from '../../src/net/guard.js';
import { tcpProbe, type TcpCheckT } from '../../src/probes/tcp.js';
import type { ProbeContext } from '../../src/probes/types.js';
import { RdapBootstrap } from '../../src/rdap/index.js';
import { TcpCheck } from '../../src/targets/check-specs.js';

const rdap = new RdapBootstrap('file:///nonexistent', { now: () => new Date() });
const open = new NetworkGuard({ allowPrivate: true });
const ctxOf = (guard: NetworkGuard = open, signal?: AbortSignal): ProbeContext => ({ guard, rdap, ...(signal && { signal }) });
const check = (fields: Partial<TcpCheckT> & { host: string; port: number }): TcpCheckT =>
  Value.Default(TcpCheck, { type: 'tcp', ...fields }) as TcpCheckT;
/** A guard whose resolver answers `names` and nothing else (names here are never system-resolvable). */
const guardWith = (names: Record<string, Awaited<ReturnType<Resolver>>>, allowPrivate: boolean): NetworkGuard =>
  new NetworkGuard({
    allowPrivate,
    resolver: async (host) => {
      const found = names[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
      return found;
    },
  });

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

describe('tcp probe', () => {
  let server: Server;
  let port: number;
  let closedPort: number;
  let connections = 0;

  before(async () => {
    server = createServer((socket) => { connections++; socket.on('error', () => {}); socket.end(); });
    port = await listen(server);
    const closed = createServer();
    closedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
  });
  after(async () => { await new Promise((resolve) => server.close(resolve)); });

  it('a listening port is up: duration is the connect time, the address is reported, no dns phase for a literal', async () => {
    const before = connections;
    const r = await tcpProbe(check({ host: '127.0.0.1', port }), ctxOf());
    assert.equal(r.status, 'up');
    assert.equal(r.error, null);
    assert.deepEqual(r.fields, { address: '127.0.0.1' });
    assert.equal(typeof r.timings?.connect, 'number');
    assert.equal(r.duration_ms, r.timings?.connect);
    assert.equal(r.timings?.dns, undefined);
    // Wait for the server side to see it: the probe really connected.
    for (let i = 0; i < 50 && connections === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(connections, before + 1);
  });

  it('a name is resolved through the guard and the socket goes to the pinned address', async () => {
    // "svc.keepwatch.invalid" has no system DNS answer: Node resolving it itself would fail.
    const guard = guardWith({ 'svc.keepwatch.invalid': [{ address: '127.0.0.1', family: 4 }] }, true);
    const r = await tcpProbe(check({ host: 'svc.keepwatch.invalid', port }), ctxOf(guard));
    assert.equal(r.status, 'up', r.error ?? '');
    assert.deepEqual(r.fields, { address: '127.0.0.1' });
    assert.equal(typeof r.timings?.dns, 'number');
    assert.equal(typeof r.timings?.connect, 'number');
  });

  it('a closed port is down: connection refused', async () => {
    const r = await tcpProbe(check({ host: '127.0.0.1', port: closedPort }), ctxOf());
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'connection refused');
  });

  it('each allowed address is tried in order until one connects; ip_version narrows the set', async () => {
    // ::1 has nothing listening on the port (the server is bound to 127.0.0.1 only), so it refuses.
    const guard = guardWith({ 'dual.keepwatch.invalid': [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }] }, true);
    const any = await tcpProbe(check({ host: 'dual.keepwatch.invalid', port }), ctxOf(guard));
    assert.equal(any.status, 'up', any.error ?? '');
    assert.deepEqual(any.fields, { address: '127.0.0.1' });
    const v6 = await tcpProbe(check({ host: 'dual.keepwatch.invalid', port, ip_version: 'ipv6' }), ctxOf(guard));
    assert.equal(v6.status, 'down');
    assert.equal(v6.error, 'connection refused');
    const v4 = await tcpProbe(check({ host: 'dual.keepwatch.invalid', port, ip_version: 'ipv4' }), ctxOf(guard));
    assert.equal(v4.status, 'up');
    assert.deepEqual(v4.fields, { address: '127.0.0.1' });
  });

  it('a name that does not resolve is down with the reason', async () => {
    const r = await tcpProbe(check({ host: 'nowhere.keepwatch.invalid', port }), ctxOf(guardWith({}, true)));
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'host not found: nowhere.keepwatch.invalid');
  });

  it('the guard refuses a private literal at connect time, and nothing reaches the server', async () => {
    const before = connections;
    const r = await tcpProbe(check({ host: '127.0.0.1', port }), ctxOf(new NetworkGuard({ allowPrivate: false })));
    assert.equal(r.status, 'down');
    assert.match(r.error ?? '', /^connection to 127\.0\.0\.1 refused by the network guard: /);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(connections, before);
  });

  it('the guard refuses a name that resolves to 127.0.0.1, and nothing reaches the server', async () => {
    const before = connections;
    const guard = new NetworkGuard({ allowPrivate: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const r = await tcpProbe(check({ host: 'rebind.example.com', port }), ctxOf(guard));
    assert.equal(r.status, 'down');
    assert.match(r.error ?? '', /^connection to rebind\.example\.com refused by the network guard: every address is in a blocked range: 127\.0\.0\.1/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(connections, before);
  });

  it('a resolver that never answers is down at the timeout: the budget covers resolution', async () => {
    const guard = new NetworkGuard({ allowPrivate: true, resolver: () => new Promise(() => {}) });
    const t0 = performance.now();
    const r = await tcpProbe(check({ host: 'slow.keepwatch.invalid', port, timeout: 150 }), ctxOf(guard));
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'timeout after 150 ms');
    assert.ok(performance.now() - t0 < 1000);
  });

  it('an aborted context signal stops the check', async () => {
    const r = await tcpProbe(check({ host: '127.0.0.1', port }), ctxOf(open, AbortSignal.abort()));
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'check aborted');
  });
});

describe('tcp probe: connect timeout', () => {
  // A listener in a child process whose event loop is blocked never accepts: once its accept queue
  // is full the kernel drops further SYNs, so a connect hangs the way a firewalled port does.
  let child: ChildProcess;
  let port: number;
  const fillers: Socket[] = [];

  before(async () => {
    const source = `
      const server = require('node:net').createServer();
      server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
        process.stdout.write(String(server.address().port) + '\\n');
        setTimeout(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0), 20);
      });`;
    child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
    port = Number(chunk.toString().trim());
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 4; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      fillers.push(s);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  });
  after(() => {
    for (const s of fillers) s.destroy();
    child.kill('SIGKILL');
  });

  it('a connect that gets no answer is down with "timeout after N ms", within the budget', async () => {
    const t0 = performance.now();
    const r = await tcpProbe(check({ host: '127.0.0.1', port, timeout: 300 }), ctxOf());
    const took = performance.now() - t0;
    assert.equal(r.status, 'down');
    assert.equal(r.error, 'timeout after 300 ms');
    assert.ok(took >= 290 && took < 1500, `took ${took} ms`);
  });
});
