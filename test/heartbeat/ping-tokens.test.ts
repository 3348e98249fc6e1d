// A single create mints the heartbeat's ping URL at once (monitoring-api.md, "Heartbeat ping
// endpoint" rule 7): 32 random bytes, looked up by hash, kept only sealed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pingTokenHash, pingUrl } from '../../src/heartbeat/index.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, httpTarget, type Api } from '../targets/helpers.js';

describe('heartbeat ping tokens', () => {
  let t: TestApp;
  let api: Api;
  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': randomBytes(32).toString('base64') } });
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
  });
  after(async () => { await t.close(); });

  const heartbeatsOf = (targetId: string) =>
    t.services.db.query<{ token_hash: string; sealed_token: string }>('SELECT token_hash, sealed_token FROM heartbeats WHERE target_id = $1', [targetId]);

  it('a created heartbeat monitor has its own sealed token at once; other kinds have none', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await api('POST', '/api/v1/targets', { name: `cron ${i}`, check: { type: 'heartbeat', period: 3_600_000 } });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    const tokens = await Promise.all(ids.map(async (id) => {
      const [row] = await heartbeatsOf(id);
      assert.ok(row, 'minted with the create');
      const token = t.services.sealer.open(row.sealed_token)!;
      assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
      assert.ok(!row.sealed_token.includes(token), 'stored sealed, not in plain text');
      assert.equal(row.token_hash, pingTokenHash(token));
      return token;
    }));
    assert.notEqual(tokens[0], tokens[1]);
    const http = (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
    assert.deepEqual(await heartbeatsOf(http), []);
  });

  it('deleting the monitor drops its token', async () => {
    const id = (await api('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } })).json().id as string;
    assert.equal((await api('DELETE', `/api/v1/targets/${id}`)).statusCode, 204);
    assert.deepEqual(await heartbeatsOf(id), []);
  });

  it('the URL is the public origin, /ping/ and the token', () => {
    assert.equal(pingUrl('https://kw.example/', 'abc'), 'https://kw.example/ping/abc');
    assert.equal(pingUrl('https://kw.example', 'abc'), 'https://kw.example/ping/abc');
  });
});
