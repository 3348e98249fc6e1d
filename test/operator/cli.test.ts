// `keepwatch admin ...` against a real `keepwatch serve` child on a zero-config data dir: the CLI
// finds the generated operator secret in data_dir and talks to the server over HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { childEnv, createChildStore, runCli, startChildServer, type ChildServer, type ChildStore } from '../db/child-server.js';

describe('keepwatch admin', () => {
  let store: ChildStore;
  let server: ChildServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    store = await createChildStore();
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
      assert.match(res.stdout, new RegExp(`^  ${command} `, 'm'), command);
    }
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
    assert.match(unknown.stdout, /create-user/);
  });

  it('without the data dir holding the secret, refuses to guess', async () => {
    const res = await runCli(['admin', 'list-regions'], { ...env, KEEPWATCH_DATA_DIR: `${store.dataDir}/elsewhere` });
    assert.equal(res.code, 2);
    assert.match(res.stdout, /no operator secret/);
  });

  it('says so in one line when no server answers', async () => {
    const res = await runCli(['admin', 'list-regions', '--url', 'http://127.0.0.1:9'], env);
    assert.equal(res.code, 3);
    assert.match(res.stdout, /^cannot reach the server at http:\/\/127\.0\.0\.1:9 .*keepwatch serve/);
    assert.doesNotMatch(res.stdout + res.stderr, /\n\s+at /);
  });
});
