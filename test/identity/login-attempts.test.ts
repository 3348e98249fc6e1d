// login_attempts rows for API token authentication (service-api.md Events 4). Design: a row for every
// failure and for every check against the store; a request served from the token cache writes none.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenant, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const SALT = 'login-attempts-test-salt';
const TTL_SECS = 30;

interface AttemptRow {
  method: string; success: boolean; failure_reason: string | null; user_id: string | null; token_id: string | null;
  ip_hash: string | null; user_agent_hash: string | null;
}

const hmac = (value: string): string => createHmac('sha256', SALT).update(value).digest('hex');

describe('login_attempts for API tokens', () => {
  let t: TestApp;
  let tenant: Tenant;
  let seq = 0;
  before(async () => {
    t = await startTestApp({ config: { 'auth.fingerprint_salt': SALT, 'auth.token_cache_ttl_secs': TTL_SECS } });
    tenant = await createTenant(t);
  });
  after(async () => { await t.close(); });

  /** A caller with its own address and User-Agent, so each test reads only its own rows. */
  function caller() {
    const ip = `198.51.100.${++seq}`;
    const userAgent = `KeepwatchTest/${seq} (${randomBytes(6).toString('hex')})`;
    return {
      ip, userAgent,
      get: (headers: Record<string, string> = {}, url = '/api/v1/me') =>
        t.inject({ method: 'GET', url, remoteAddress: ip, headers: { 'user-agent': userAgent, ...headers } }),
      async rows(): Promise<AttemptRow[]> {
        await t.services.loginAttempts.flush();
        const rows = await t.services.db.query<AttemptRow & { id: number }>(
          'SELECT * FROM login_attempts WHERE user_agent_hash = $1 ORDER BY id', [hmac(userAgent)]);
        return rows.map(({ method, success, failure_reason, user_id, token_id, ip_hash, user_agent_hash }) =>
          ({ method, success, failure_reason, user_id, token_id, ip_hash, user_agent_hash }));
      },
    };
  }

  const tokenIdOf = async (token: string): Promise<string> =>
    (await t.services.db.query<{ id: string }>('SELECT id FROM api_tokens WHERE prefix = $1', [token.slice(0, 16)]))[0]!.id;

  it('a fresh verification writes a success row; cache hits write none; the next verification writes one', async () => {
    const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    const tokenId = await tokenIdOf(token);
    const c = caller();
    const success = { method: 'api_token', success: true, failure_reason: null, user_id: tenant.userId, token_id: tokenId, ip_hash: hmac(c.ip), user_agent_hash: hmac(c.userAgent) };
    assert.equal((await c.get(bearer(token))).statusCode, 200);
    assert.deepEqual(await c.rows(), [success]);
    for (let i = 0; i < 3; i++) assert.equal((await c.get(bearer(token), '/api/v1/regions')).statusCode, 200);
    assert.deepEqual(await c.rows(), [success]);
    t.clock.advance(TTL_SECS * 1000 + 1000);
    assert.equal((await c.get(bearer(token))).statusCode, 200);
    assert.deepEqual(await c.rows(), [success, success]);
  });

  it('malformed tokens and non-Bearer headers write malformed_token', async () => {
    const c = caller();
    for (const authorization of ['Bearer sm_live_short', 'Bearer not-a-token', 'Basic dXNlcjpwYXNz']) {
      assert.equal((await c.get({ authorization })).statusCode, 401);
    }
    const rows = await c.rows();
    assert.equal(rows.length, 3);
    for (const row of rows) {
      assert.deepEqual(row, { method: 'api_token', success: false, failure_reason: 'malformed_token', user_id: null, token_id: null, ip_hash: hmac(c.ip), user_agent_hash: hmac(c.userAgent) });
    }
  });

  it('a request with no Authorization header is not an attempt and writes nothing', async () => {
    const c = caller();
    assert.equal((await c.get()).statusCode, 401);
    assert.deepEqual(await c.rows(), []);
  });

  it('unknown tokens, forged tails and revoked tokens write invalid_token', async () => {
    const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    const revoked = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    await t.services.db.query('UPDATE api_tokens SET revoked_at = now() WHERE prefix = $1', [revoked.slice(0, 16)]);
    const c = caller();
    const unknown = `sm_live_${randomBytes(32).toString('base64url')}`;
    const forged = token.slice(0, 16) + randomBytes(32).toString('base64url').slice(0, token.length - 16);
    for (const raw of [unknown, forged, revoked]) assert.equal((await c.get(bearer(raw))).statusCode, 401);
    const base = { method: 'api_token', success: false, failure_reason: 'invalid_token', ip_hash: hmac(c.ip), user_agent_hash: hmac(c.userAgent) };
    assert.deepEqual(await c.rows(), [
      { ...base, user_id: null, token_id: null },
      { ...base, user_id: null, token_id: null },
      { ...base, user_id: tenant.userId, token_id: await tokenIdOf(revoked) },
    ]);
  });

  it('an expired token writes token_expired on every attempt, cached or not', async () => {
    const token = await createToken(t, tenant.userId, { orgId: tenant.orgId, expiresInDays: 1 });
    const tokenId = await tokenIdOf(token);
    const c = caller();
    assert.equal((await c.get(bearer(token))).statusCode, 200);
    t.clock.advance(86_400_000 + 1000);
    assert.equal((await c.get(bearer(token))).statusCode, 401);
    assert.equal((await c.get(bearer(token))).statusCode, 401);
    const rows = await c.rows();
    assert.deepEqual(rows.map((r) => [r.success, r.failure_reason, r.token_id]), [
      [true, null, tokenId], [false, 'token_expired', tokenId], [false, 'token_expired', tokenId],
    ]);
  });

  it('a token with an audience writes token_audience on every attempt', async () => {
    const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    await t.services.db.query('UPDATE api_tokens SET audience = $2 WHERE prefix = $1', [token.slice(0, 16), 'https://mcp.example/mcp']);
    const c = caller();
    assert.equal((await c.get(bearer(token))).statusCode, 401);
    assert.equal((await c.get(bearer(token))).statusCode, 401);
    const row = { method: 'api_token', success: false, failure_reason: 'token_audience', user_id: tenant.userId, token_id: await tokenIdOf(token), ip_hash: hmac(c.ip), user_agent_hash: hmac(c.userAgent) };
    assert.deepEqual(await c.rows(), [row, row]);
  });

  it('a bound token whose org membership is gone writes org_unavailable, not success', async () => {
    const other = await createTenant(t);
    const token = await createToken(t, other.userId, { orgId: other.orgId });
    await t.services.db.query('DELETE FROM memberships WHERE user_id = $1', [other.userId]);
    const c = caller();
    assert.equal((await c.get(bearer(token))).statusCode, 401);
    assert.deepEqual(await c.rows(), [{ method: 'api_token', success: false, failure_reason: 'org_unavailable', user_id: other.userId, token_id: await tokenIdOf(token), ip_hash: hmac(c.ip), user_agent_hash: hmac(c.userAgent) }]);
  });

  it('stores only HMAC-SHA256 fingerprints: the raw IP and User-Agent appear nowhere in the row', async () => {
    const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    const c = caller();
    await c.get(bearer(token));
    await c.get(bearer(`sm_live_${randomBytes(32).toString('base64url')}`));
    await t.services.loginAttempts.flush();
    const rows = await t.services.db.query<Record<string, unknown>>('SELECT * FROM login_attempts WHERE user_agent_hash = $1', [hmac(c.userAgent)]);
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.ip_hash, hmac(c.ip));
      assert.match(row.ip_hash as string, /^[0-9a-f]{64}$/);
      assert.notEqual(row.ip_hash, createHmac('sha256', 'another-salt').update(c.ip).digest('hex'));
      const text = JSON.stringify(row);
      assert.ok(!text.includes(c.ip), 'raw IP stored');
      assert.ok(!text.includes(c.userAgent) && !text.includes('KeepwatchTest'), 'raw User-Agent stored');
      assert.ok(!text.includes(token) && !text.includes(token.slice(8)), 'token stored');
    }
  });
});
