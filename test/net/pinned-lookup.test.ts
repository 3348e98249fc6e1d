import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { NetworkGuard, pinnedLookup, type ResolvedAddress, type Resolver } from '../../src/net/guard.js';

/** `app.test` lives on this machine; `rebind.test` answers public first, then 127.0.0.1. */
function resolver(): Resolver & { rebinds: number } {
  const fn = Object.assign(async (host: string): Promise<ResolvedAddress[]> => {
    if (host === 'app.test') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'rebind.test') {
      fn.rebinds += 1;
      return [{ address: fn.rebinds === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    }
    if (host === 'split.test') return [{ address: '127.0.0.1', family: 4 }, { address: '8.8.8.8', family: 4 }];
    throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  }, { rebinds: 0 });
  return fn;
}

/** Connects and reads the server's greeting; rejects with the socket's error. */
function greet(port: number, host: string, guard: NetworkGuard, autoSelectFamily: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host, lookup: pinnedLookup(guard), autoSelectFamily });
    socket.setEncoding('utf8');
    let data = '';
    socket.on('data', (chunk: string) => { data += chunk; });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

describe('pinnedLookup with a real connection to 127.0.0.1', () => {
  let server: net.Server;
  let web: http.Server;
  let port: number;
  let webPort: number;

  before(async () => {
    server = net.createServer((socket) => socket.end('hello'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    web = http.createServer((_req, res) => res.end('web'));
    web.listen(0, '127.0.0.1');
    await once(web, 'listening');
    webPort = (web.address() as AddressInfo).port;
  });
  after(async () => {
    server.close();
    web.close();
    await Promise.all([once(server, 'close'), once(web, 'close')]);
  });

  for (const autoSelectFamily of [true, false]) {
    it(`connects with allowPrivate (autoSelectFamily ${autoSelectFamily})`, async () => {
      const guard = new NetworkGuard({ allowPrivate: true, resolver: resolver() });
      assert.equal(await greet(port, 'app.test', guard, autoSelectFamily), 'hello');
    });

    it(`refuses with EBLOCKEDADDRESS without allowPrivate (autoSelectFamily ${autoSelectFamily})`, async () => {
      const guard = new NetworkGuard({ allowPrivate: false, resolver: resolver() });
      await assert.rejects(greet(port, 'app.test', guard, autoSelectFamily), { code: 'EBLOCKEDADDRESS' });
    });
  }

  it('catches DNS rebinding: public at write time, loopback at connect time', async () => {
    const dns = resolver();
    const guard = new NetworkGuard({ allowPrivate: false, resolver: dns });
    assert.deepEqual(await guard.checkHost('rebind.test', 'check.url'), { addresses: ['93.184.216.34'] });
    await assert.rejects(greet(port, 'rebind.test', guard, true), { code: 'EBLOCKEDADDRESS' });
    assert.equal(dns.rebinds, 2);
  });

  it('works as the lookup of http.request', async () => {
    const get = (guard: NetworkGuard): Promise<string> => new Promise((resolve, reject) => {
      http.get({ host: 'app.test', port: webPort, lookup: pinnedLookup(guard), agent: false }, (res) => {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (chunk: string) => { body += chunk; });
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    assert.equal(await get(new NetworkGuard({ allowPrivate: true, resolver: resolver() })), 'web');
    await assert.rejects(get(new NetworkGuard({ allowPrivate: false, resolver: resolver() })), { code: 'EBLOCKEDADDRESS' });
  });

  it('answers only with allowed addresses, in both callback shapes', async () => {
    const lookup = pinnedLookup(new NetworkGuard({ allowPrivate: false, resolver: resolver() }));
    const all = await new Promise((resolve, reject) => {
      lookup('split.test', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
    });
    assert.deepEqual(all, [{ address: '8.8.8.8', family: 4 }]);
    const one = await new Promise((resolve, reject) => {
      lookup('split.test', { family: 4 }, (err, address, family) => (err ? reject(err) : resolve([address, family])));
    });
    assert.deepEqual(one, ['8.8.8.8', 4]);
  });
});
