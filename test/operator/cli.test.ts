// `keepwatch admin ...` against a real `keepwatch serve` child on a zero-config, empty data dir (the
// README's first run): the CLI finds the generated operator secret in data_dir and talks to the
// server over HTTP.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { childEnv, createChildStore, runCli, startChildServer, type ChildServer, type ChildStore } from '../db/child-server.js';

describe('keepwatch admin', () => {
  let store: ChildStore;
  let server: ChildServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    store = await createChildStore({ empty: true });
    server = await startChildServer(store);
    env = childEnv(store, server.port);
  });
  after(async () => {
    await server?.kill('SIGTERM');
    await store?.drop();
  });

  const admin = (...args: string[]) => runCli(['admin', ...args], env);

  it('--help lists the commands', async () => {
    const res = await admin('--help');
    assert.equal(res.code, 0, res.stderr);
    for (const command of ['create-user', 'create-token', 'set-plan', 'set-overrides', 'clear-overrides', 'list-regions', 'create-region', 'create-agent', 'delete-agent']) {
      assert.match(res.stdout, new RegExp(`^  ${command}( .*)?$`, 'm'), command);
    }
    for (const line of res.stdout.split('\n')) assert.equal(line, line.trimEnd(), 'no trailing spaces');
  });

  it('create-user and create-token mint a working API token through the generated secret', async () => {
    const email = `cli-${Date.now()}@example.test`;
    const user = await admin('create-user', '--email', email, '--org-name', 'CLI Org');
    assert.equal(user.code, 0, user.stdout + user.stderr);
    const created = JSON.parse(user.stdout) as { user_id: string; org_id: string; org_slug: string };
    assert.match(created.user_id, /^[0-9a-f-]{36}$/);
    assert.equal(created.org_slug, 'cli-org');

    const minted = await admin('create-token', '--user-id', created.user_id, '--name', 'cli', '--scopes', 'full_access', '--org-id', created.org_id);
    assert.equal(minted.code, 0, minted.stdout + minted.stderr);
    const token = (JSON.parse(minted.stdout) as { token: string; scopes: string[]; org_id: string }).token;
    assert.match(token, /^sm_live_/);

    const regions = await fetch(`${server.base}/api/v1/regions`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(regions.status, 200);
    assert.ok(((await regions.json()) as { regions: Array<{ id: string }> }).regions.some((r) => r.id === 'local'));
    const refused = await fetch(`${server.base}/api/v1/regions`, { headers: { authorization: `Bearer ${token.slice(0, -1)}x` } });
    assert.equal(refused.status, 401);

    const again = await admin('create-user', '--email', email.toUpperCase());
    assert.equal(again.code, 1, 'a refused request exits 1');
    assert.match(again.stdout, /"code"/);
  });

  it('exits 2 with the usage on a missing option or an unknown command', async () => {
    const missing = await admin('create-token', '--name', 'x');
    assert.equal(missing.code, 2);
    assert.match(missing.stdout, /missing --user-id, --scopes/);
    const typo = await admin('create-token', '--user-id', '0190a7c2-6f1e-7a00-8000-0000000000cc', '--name', 'x', '--scopes', 'full_access', '--expires-in-days', '30d');
    assert.equal(typo.code, 1, 'a malformed expiry is refused by the server, never sent as "no expiry"');
    assert.match(typo.stdout, /expires_in_days/);
    const unknown = await admin('frobnicate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^unknown command: frobnicate\n.*\n\n {2}create-user /);
    const none = await admin();
    assert.equal(none.code, 2, 'no command: the usage, and 2, as `keepwatch` with no command');
    assert.match(none.stdout, /^ {2}create-user /m);
  });

  it('delete-agent prints nothing and exits 0; deleting it again is NOT_FOUND', async () => {
    const region = await admin('create-region', '--id', 'cli-eu', '--name', 'CLI EU');
    assert.equal(region.code, 0, region.stdout + region.stderr);
    const created = await admin('create-agent', '--region-id', 'cli-eu', '--name', 'cli-agent');
    assert.equal(created.code, 0, created.stdout + created.stderr);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const deleted = await admin('delete-agent', '--id', id);
    assert.equal(deleted.code, 0, deleted.stdout + deleted.stderr);
    assert.equal(deleted.stdout, '', 'no bare status code');
    assert.equal(deleted.stderr, '');
    const again = await admin('delete-agent', '--id', id);
    assert.equal(again.code, 1);
    assert.equal((JSON.parse(again.stdout) as { error: { code: string } }).error.code, 'NOT_FOUND');
  });

  it('on NOT_FOUND, hints on stderr that the secret or --url may be wrong, naming where the secret came from', async () => {
    const wrong = await runCli(['admin', 'list-agents'], { ...env, KEEPWATCH_OPERATOR__SECRET: 'not-the-secret' });
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.equal((JSON.parse(wrong.stdout) as { error: { code: string } }).error.code, 'NOT_FOUND', 'stdout stays the JSON answer');
    assert.equal(wrong.stderr, `hint: NOT_FOUND is also the answer to a wrong operator secret: check that the secret (from KEEPWATCH_OPERATOR__SECRET) is the server's and that ${server.base} is the server (--url)\n`);
    const missing = await admin('delete-agent', '--id', '0190a7c2-6f1e-7a00-8000-0000000000cc');
    assert.equal(missing.code, 1);
    assert.ok(missing.stderr.startsWith('hint: '), missing.stderr);
    assert.ok(missing.stderr.includes(`(from ${join(store.dataDir, 'operator-secret')})`), missing.stderr);
  });

  it('without the data dir holding the secret, refuses to guess', async () => {
    const res = await runCli(['admin', 'list-regions'], { ...env, KEEPWATCH_DATA_DIR: `${store.dataDir}/elsewhere` });
    assert.equal(res.code, 2);
    assert.match(res.stdout, /no operator secret/);
  });

  it('with operator.auto_secret off and no secret set, says the surface is off rather than send a stale file', async () => {
    const res = await admin('list-regions', '--url', `http://127.0.0.1:${server.port}`);
    assert.equal(res.code, 0, 'the generated secret is there');
    const off = await runCli(['admin', 'list-regions'], { ...env, KEEPWATCH_OPERATOR__AUTO_SECRET: 'false' });
    assert.equal(off.code, 2);
    assert.match(off.stdout, /operator\.auto_secret is false, so the server's operator surface is off/);
  });

  it('a configuration it refuses is exit 2 with the config line on stderr, nothing on stdout (no server was asked)', async () => {
    const res = await runCli(['admin', 'list-regions'], { ...env, KEEPWATCH_CHECKER__PER_HOST_MAX_INFLIGHT: '0' });
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^config: KEEPWATCH_CHECKER__PER_HOST_MAX_INFLIGHT: /);
  });

  const NO_STACK = /\n\s+at /;

  it('reads options given before the command as the command\'s own', async () => {
    const regions = await admin('--url', server.base, 'list-regions');
    assert.equal(regions.code, 0, regions.stdout + regions.stderr);
    assert.ok((JSON.parse(regions.stdout) as { regions: Array<{ id: string }> }).regions.some((r) => r.id === 'local'), regions.stdout);
    const elsewhere = await admin('--url', 'http://127.0.0.1:9', 'list-regions');
    assert.equal(elsewhere.code, 3, 'the leading --url is the one used');
    const help = await admin('--url', server.base, '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^ {2}create-user /m);
    const stray = await admin('--bogus', 'list-regions');
    assert.equal(stray.code, 2);
  });

  it('prints a command\'s usage for --help', async () => {
    for (const flag of ['--help', '-h']) {
      const res = await admin('create-user', flag);
      assert.equal(res.code, 0, res.stdout + res.stderr);
      assert.equal(res.stdout, 'usage: keepwatch admin create-user --email EMAIL [--plan PLAN] [--org-name NAME]\n');
    }
    assert.match((await admin('list-regions', '--help')).stdout, /^usage: keepwatch admin list-regions\n$/);
  });

  it('exits 2 with one line and the usage on an unknown option, a missing value, a stray argument or a bad --url', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['create-user', '--emial', 'a@example.test'], /--emial/],
      [['create-user', '--email'], /--email/],
      [['create-user', '--email', 'a@example.test', 'extra'], /extra/],
      [['list-regions', '--url', 'not a url'], /--url must be an http\(s\) URL/],
      [['list-regions', '--url', 'ftp://127.0.0.1'], /--url must be an http\(s\) URL/],
    ];
    for (const [args, reason] of cases) {
      const res = await admin(...args);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
      const [line, usage, ...rest] = res.stdout.trimEnd().split('\n');
      assert.match(line!, reason, args.join(' '));
      assert.match(usage!, new RegExp(`^usage: keepwatch admin ${args[0]}`));
      assert.deepEqual(rest, []);
      assert.doesNotMatch(res.stdout + res.stderr, NO_STACK);
    }
  });

  it('exits 2 on --caps that is not JSON, and leaves other JSON to the server', async () => {
    const account = '0190a7c2-6f1e-7a00-8000-0000000000cc';
    const bad = await admin('set-overrides', '--account-id', account, '--caps', 'max_targets=5', '--reason', 'r');
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /^--caps must be JSON, e\.g\. '\{"max_targets":500\}'\nusage: keepwatch admin set-overrides /);
    assert.doesNotMatch(bad.stdout + bad.stderr, NO_STACK);
    const unknown = await admin('set-overrides', '--account-id', account, '--caps', '{"max_targets":5}', '--reason', 'r');
    assert.equal(unknown.code, 1, 'well-formed: the server answers (no such account)');
    assert.match(unknown.stdout, /NOT_FOUND/);
  });

  it('says so in one line, exit 1, when the server answers something that is not JSON', async () => {
    await withFakeServer('127.0.0.1', (res) => { res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'); }, async (port) => {
      const res = await admin('list-regions', '--url', `http://127.0.0.1:${port}`);
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assert.equal(res.stdout, `the server at http://127.0.0.1:${port} answered 502 text/html, not JSON; is it keepwatch? (--url to point elsewhere)\n`);
      assert.doesNotMatch(res.stderr, NO_STACK);
    });
  });

  it('reaches a server listening on a wildcard or IPv6 address through its loopback', async () => {
    for (const [listen, host] of [['::1', '::'], ['::1', '::1'], ['127.0.0.1', '0.0.0.0'], ['::1', '0:0:0:0:0:0:0:0']] as const) {
      const seen: string[] = [];
      await withFakeServer(listen, (res, req) => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"regions":[]}');
      }, async (port) => {
        const res = await runCli(['admin', 'list-regions'], { ...env, HOST: host, PORT: String(port), KEEPWATCH_OPERATOR__SECRET: 'fake-secret' });
        assert.equal(res.code, 0, `HOST=${host}: ${res.stdout}${res.stderr}`);
        assert.deepEqual(JSON.parse(res.stdout), { regions: [] });
      });
      assert.deepEqual(seen, ['GET /operator/regions Bearer fake-secret'], `HOST=${host}`);
    }
  });

  it('says so in one line when no server answers', async () => {
    const res = await runCli(['admin', 'list-regions', '--url', 'http://127.0.0.1:9'], env);
    assert.equal(res.code, 3);
    assert.match(res.stdout, /^cannot reach the server at http:\/\/127\.0\.0\.1:9 .*keepwatch serve/);
    assert.doesNotMatch(res.stdout + res.stderr, /\n\s+at /);
  });
});

/** Runs `fn` with a plain HTTP server on `host` answering every request with `handle`. */
async function withFakeServer(host: string, handle: (res: ServerResponse, req: IncomingMessage) => void, fn: (port: number) => Promise<void>): Promise<void> {
  const server = createServer((req, res) => handle(res, req));
  await new Promise<void>((ok) => server.listen(0, host, ok));
  try {
    await fn((server.address() as { port: number }).port);
  } finally {
    await new Promise<void>((ok) => server.close(() => ok()));
  }
}
