// last_used_at debounce and the max_api_tokens_per_user cap (service-api.md "API token auth" 1, Limits 2).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { TokenVerifier } from '../../src/identity/api-tokens.js';
import { bearer, createTenant, createToken, startTestApp, type TestApp } from '../helpers/app.js';

const FREE_TOKEN_CAP = 5;
const TEST_POOL_SIZE = 5; // test/helpers/store.ts opens PostgreSQL with 5 connections

/**
 * Blocks writes to api_tokens from another connection; the returned function waits until every
 * pooled connection is blocked (on the table or behind another mint), then lets them go.
 */
async function holdTokenInserts(url: string): Promise<() => Promise<void>> {
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE api_tokens IN SHARE MODE');
  return async () => {
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        // Inside a transaction pg_stat_activity is a snapshot taken once; clear it to see the present.
        await blocker.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await blocker.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (rows[0]!.n >= TEST_POOL_SIZE || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await blocker.query('COMMIT');
    } finally {
      await blocker.end();
    }
  };
}

describe('API tokens', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const lastUsed = async (token: string): Promise<number | null> => {
    const [row] = await t.services.db.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_tokens WHERE prefix = $1', [token.slice(0, 16)]);
    return row!.last_used_at?.getTime() ?? null;
  };
  const use = async (token: string): Promise<void> => {
    assert.equal((await t.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(token) })).statusCode, 200);
    await t.services.tokens.settled();
  };

  describe('last_used_at', () => {
    it('is set on first use, kept within 60 s, rewritten after', async () => {
      const tenant = await createTenant(t);
      const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
      assert.equal(await lastUsed(token), null);

      const first = t.clock.now().getTime();
      await use(token);
      const set = await lastUsed(token);
      assert.ok(set !== null && set >= first && set <= t.clock.now().getTime(), 'set to the time of first use');

      t.clock.advance(30_000);
      await use(token);
      assert.equal(await lastUsed(token), set, 'unchanged 30 s later');

      t.clock.advance(31_000);
      const third = t.clock.now().getTime();
      await use(token);
      const moved = await lastUsed(token);
      assert.ok(moved !== null && moved >= third && moved >= set + 60_000, 'rewritten after 60 s');
    });

    it('the debounce also holds in SQL, across nodes', async () => {
      const tenant = await createTenant(t);
      const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
      const [{ id }] = await t.services.db.query<{ id: string }>('SELECT id FROM api_tokens WHERE prefix = $1', [token.slice(0, 16)]) as [{ id: string }];
      // Two nodes on one store: each has its own in-memory debounce, so only the UPDATE's condition can hold the window.
      const nodeA = new TokenVerifier(t.services.db, t.clock, 30_000);
      const nodeB = new TokenVerifier(t.services.db, t.clock, 30_000);
      const before = t.clock.now().getTime();
      await nodeA.touch(id);
      const set = await lastUsed(token);
      assert.ok(set !== null && set >= before && set <= t.clock.now().getTime());

      t.clock.advance(30_000);
      await nodeB.touch(id);
      assert.equal(await lastUsed(token), set, 'a second node within 60 s does not rewrite it');

      t.clock.advance(30_001);
      const later = t.clock.now().getTime();
      await nodeB.touch(id);
      const moved = await lastUsed(token);
      assert.ok(moved !== null && moved >= later && moved >= set + 60_000, 'rewritten once 60 s have passed');
    });
  });

  describe('verification', () => {
    const TTL_MS = 30_000;
    const tokenRow = async (token: string) =>
      (await t.services.db.query<{ id: string; token_hash: string }>('SELECT id, token_hash FROM api_tokens WHERE prefix = $1', [token.slice(0, 16)]))[0]!;

    it('concurrent requests with an unchecked token share one argon2 run, and one of them is the fresh check', async () => {
      const tenant = await createTenant(t);
      const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
      const verifier = new TokenVerifier(t.services.db, t.clock, TTL_MS);
      const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(token)));
      assert.equal(verifier.argon2Runs, 1);
      assert.equal(results.filter((r) => r.fresh).length, 1);
      assert.ok(results.every((r) => r.principal.userId === tenant.userId));
    });

    it('once the cache time is up the row is read again without argon2, and a revocation shows', async () => {
      const tenant = await createTenant(t);
      const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
      const verifier = new TokenVerifier(t.services.db, t.clock, TTL_MS);
      assert.equal((await verifier.verify(token)).fresh, true);
      assert.equal((await verifier.verify(token)).fresh, false, 'served from the cache');

      t.clock.advance(TTL_MS + 1);
      const again = await Promise.all(Array.from({ length: 10 }, () => verifier.verify(token)));
      assert.equal(again.filter((r) => r.fresh).length, 1, 'the lapse is one check against the store');
      assert.equal(verifier.argon2Runs, 1, 'the hash is unchanged: no second argon2 run');

      await t.services.db.query('UPDATE api_tokens SET revoked_at = $2 WHERE id = $1', [(await tokenRow(token)).id, t.clock.now()]);
      t.clock.advance(TTL_MS + 1);
      await assert.rejects(verifier.verify(token), (err: Error & { reason?: string }) => err.reason === 'invalid_token');
    });

    it('a row whose hash changed is verified with argon2 again', async () => {
      const tenant = await createTenant(t);
      const token = await createToken(t, tenant.userId, { orgId: tenant.orgId });
      const other = await createToken(t, tenant.userId, { orgId: tenant.orgId });
      const verifier = new TokenVerifier(t.services.db, t.clock, TTL_MS);
      await verifier.verify(token);
      // The row now holds another token's hash: the cached verification no longer vouches for it.
      await t.services.db.query('UPDATE api_tokens SET token_hash = $2 WHERE id = $1', [(await tokenRow(token)).id, (await tokenRow(other)).token_hash]);
      t.clock.advance(TTL_MS + 1);
      await assert.rejects(verifier.verify(token), (err: Error & { reason?: string }) => err.reason === 'invalid_token');
      assert.equal(verifier.argon2Runs, 2);
    });
  });

  describe('max_api_tokens_per_user', () => {
    const mint = (userId: string, name = 'tok') =>
      t.operator('POST', `/operator/users/${userId}/api-tokens`, { name, scopes: ['targets:read'] });
    const count = async (userId: string): Promise<number> =>
      (await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens WHERE user_id = $1', [userId]))[0]!.n;

    it('minting past the plan cap is 422 QUOTA_EXCEEDED naming the quota', async () => {
      const tenant = await createTenant(t, { plan: 'free' });
      for (let i = 0; i < FREE_TOKEN_CAP; i++) assert.equal((await mint(tenant.userId, `t${i}`)).statusCode, 201);
      const res = await mint(tenant.userId);
      assert.equal(res.statusCode, 422);
      const body = res.json() as { error: { code: string; quota: string; message: string } };
      assert.equal(body.error.code, 'QUOTA_EXCEEDED');
      assert.equal(body.error.quota, 'max_api_tokens_per_user');
      assert.equal(typeof body.error.message, 'string');
      assert.equal(await count(tenant.userId), FREE_TOKEN_CAP);
    });

    it('a revoked or expired token frees its slot', async () => {
      const tenant = await createTenant(t, { plan: 'free' });
      for (let i = 0; i < FREE_TOKEN_CAP; i++) assert.equal((await mint(tenant.userId)).statusCode, 201);
      assert.equal((await mint(tenant.userId)).statusCode, 422);
      await t.services.db.query(`UPDATE api_tokens SET revoked_at = now() WHERE id = (SELECT id FROM api_tokens WHERE user_id = $1 LIMIT 1)`, [tenant.userId]);
      assert.equal((await mint(tenant.userId)).statusCode, 201);
      assert.equal((await mint(tenant.userId)).statusCode, 422);
      await t.services.db.query(`UPDATE api_tokens SET expires_at = $2 WHERE id = (SELECT id FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL LIMIT 1)`,
        [tenant.userId, new Date(t.clock.now().getTime() - 1000)]);
      assert.equal((await mint(tenant.userId)).statusCode, 201);
    });

    /** Fires `n` mints at once; on PostgreSQL they are first held at the table so they meet at the count-and-insert. */
    async function parallelMints(userId: string, n: number) {
      // Only the per-user lock keeps mints that reach the count together from all seeing the same count.
      const release = t.store.url ? await holdTokenInserts(t.store.url) : async () => {};
      const pending = Promise.all(Array.from({ length: n }, (_, i) => mint(userId, `p${i}`)));
      await release();
      const results = await pending;
      for (const r of results.filter((r) => r.statusCode === 422)) {
        assert.equal((r.json() as { error: { quota: string } }).error.quota, 'max_api_tokens_per_user');
      }
      return results.map((r) => r.statusCode).sort();
    }

    it('12 parallel mints on an empty free-plan user leave exactly the cap', async () => {
      const tenant = await createTenant(t, { plan: 'free' });
      const statuses = await parallelMints(tenant.userId, 12);
      assert.deepEqual(statuses, [...Array(FREE_TOKEN_CAP).fill(201), ...Array(12 - FREE_TOKEN_CAP).fill(422)]);
      assert.equal(await count(tenant.userId), FREE_TOKEN_CAP);
    });

    it('12 parallel mints on a user two short of the cap add exactly two', async () => {
      const tenant = await createTenant(t, { plan: 'free' });
      for (let i = 0; i < FREE_TOKEN_CAP - 2; i++) assert.equal((await mint(tenant.userId)).statusCode, 201);
      const statuses = await parallelMints(tenant.userId, 12);
      assert.deepEqual(statuses, [201, 201, ...Array(10).fill(422)]);
      assert.equal(await count(tenant.userId), FREE_TOKEN_CAP);
    });

    it('the cap is per user: another user on the same plan is unaffected', async () => {
      const full = await createTenant(t, { plan: 'free' });
      const other = await createTenant(t, { plan: 'free' });
      for (let i = 0; i < FREE_TOKEN_CAP; i++) assert.equal((await mint(full.userId)).statusCode, 201);
      assert.equal((await mint(full.userId)).statusCode, 422);
      assert.equal((await mint(other.userId)).statusCode, 201);
    });
  });
});
