// `auth.public_base_url` unset is where the server listens (CONTRACT.md: `PORT`, `HOST`; the ping
// URL is `{auth.public_base_url}/ping/{token}`), so a server started on another port hands out ping
// URLs and links that reach it. An explicit setting always wins.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig, type LoadOptions } from '../../src/config/load.js';
import { listenOrigin } from '../../src/config/public-base-url.js';
import { createTenantWithToken, startTestApp } from '../helpers/app.js';
import { client } from '../targets/helpers.js';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const tempDir = (): string => { const d = mkdtempSync(join(tmpdir(), 'keepwatch-config-')); dirs.push(d); return d; };
const baseUrl = (o: LoadOptions = {}) => loadConfig({ env: {}, cwd: tempDir(), ...o })['auth.public_base_url'];

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('config: auth.public_base_url', () => {
  it('unset, follows http.host and http.port: the defaults give http://localhost:8080', () => {
    assert.equal(baseUrl(), 'http://localhost:8080');
    assert.equal(baseUrl({ env: { PORT: '9000' } }), 'http://localhost:9000');
    assert.equal(baseUrl({ env: { KEEPWATCH_HTTP__PORT: '9001', HOST: '10.0.0.5' } }), 'http://10.0.0.5:9001');
    assert.equal(baseUrl({ overrides: { 'http.host': 'keepwatch.internal', 'http.port': 8443 } }), 'http://keepwatch.internal:8443');
  });

  it('a wildcard or loopback host is localhost; another IPv6 host gets brackets; port 80 is the default', () => {
    for (const host of ['0.0.0.0', '::', '0:0:0:0:0:0:0:0', '127.0.0.1', '::1']) {
      assert.equal(listenOrigin(host, 9000), 'http://localhost:9000', host);
    }
    assert.equal(listenOrigin('2001:db8::1', 9000), 'http://[2001:db8::1]:9000');
    assert.equal(listenOrigin('192.0.2.7', 80), 'http://192.0.2.7');
    assert.equal(baseUrl({ env: { HOST: '::', PORT: '9000' } }), 'http://localhost:9000');
  });

  it('an explicit setting wins over the listen address, from env, file or caller', () => {
    const env = { PORT: '9000', KEEPWATCH_AUTH__PUBLIC_BASE_URL: 'https://status.example.com' };
    assert.equal(baseUrl({ env }), 'https://status.example.com');
    const cwd = tempDir();
    writeFileSync(join(cwd, 'keepwatch.toml'), '[auth]\npublic_base_url = "https://from.file"\n[http]\nport = 9000\n');
    assert.equal(loadConfig({ env: {}, cwd })['auth.public_base_url'], 'https://from.file');
    assert.equal(baseUrl({ env: { PORT: '9000' }, overrides: { 'auth.public_base_url': 'https://from.caller' } }), 'https://from.caller');
    assert.equal(baseUrl({ env: { PORT: '9000', KEEPWATCH_AUTH__PUBLIC_BASE_URL: '' } }), 'http://localhost:9000', 'empty is unset');
  });

  it('refuses to boot, naming the key, on anything but an http(s) origin: ping URLs would not reach the server', () => {
    const bad = ['notaurl', 'status.example.com', 'ftp://status.example.com', 'https://', 'https://status.example.com/keepwatch',
      'https://status.example.com/?a=1', 'https://status.example.com/#top', 'https://u:p@status.example.com'];
    for (const value of bad) {
      assert.throws(() => baseUrl({ env: { KEEPWATCH_AUTH__PUBLIC_BASE_URL: value } }), (err: unknown) => {
        assert.ok(err instanceof ConfigError, value);
        assert.equal(err.key, 'KEEPWATCH_AUTH__PUBLIC_BASE_URL');
        assert.equal(err.message, `config: KEEPWATCH_AUTH__PUBLIC_BASE_URL: expected an http(s) origin such as https://status.example.com (no path: the service answers at the root), got ${JSON.stringify(value)}`);
        return true;
      });
    }
    const cwd = tempDir();
    writeFileSync(join(cwd, 'keepwatch.toml'), '[auth]\npublic_base_url = "notaurl"\n');
    assert.throws(() => loadConfig({ env: {}, cwd }), (err: unknown) => err instanceof ConfigError && err.key === 'auth.public_base_url');
  });

  it('takes an origin with a trailing slash, and keeps the bare origin that links are built on', () => {
    assert.equal(baseUrl({ env: { KEEPWATCH_AUTH__PUBLIC_BASE_URL: 'https://status.example.com/' } }), 'https://status.example.com');
    assert.equal(baseUrl({ env: { KEEPWATCH_AUTH__PUBLIC_BASE_URL: 'http://10.0.0.5:8080/' } }), 'http://10.0.0.5:8080');
    assert.equal(baseUrl({ env: { KEEPWATCH_AUTH__PUBLIC_BASE_URL: 'HTTPS://Status.Example.com:443' } }), 'https://status.example.com');
  });

  it('refuses to boot, naming the key, when the host cannot be written in a URL', () => {
    assert.throws(() => baseUrl({ env: { HOST: 'not a host' } }), (err: unknown) => err instanceof ConfigError && err.key === 'auth.public_base_url');
  });

  it('a server on another port hands out a ping URL that reaches it', async () => {
    const port = await freePort();
    const t = await startTestApp({ config: { 'http.port': port } });
    try {
      await t.app.listen({ port, host: '127.0.0.1' });
      const api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
      const id = (await api('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } })).json().id as string;
      const pingUrl = (await api('GET', `/api/v1/targets/${id}/heartbeat`)).json().ping_url as string;
      assert.ok(pingUrl.startsWith(`http://localhost:${port}/ping/`), pingUrl);
      assert.equal((await fetch(pingUrl)).status, 200);
    } finally {
      await t.close();
    }
  });
});
