// Operator bootstrap (CONTRACT.md "Operator surface"): users who own a new account and org, and
// API tokens minted for them, shown once and stored as argon2id hashes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verify } from '@node-rs/argon2';
import { bearer, createTenant, startTestApp, type TestApp } from '../helpers/app.js';

interface Created { user_id: string; account_id: string; org_id: string; org_slug: string }
interface Minted { id: string; prefix: string; token: string; scopes: string[]; org_id: string | null; expires_at: string | null }
interface ErrorBody { error: { code: string; field?: string } }

let seq = 0;
const email = (local = 'boot') => `${local}${++seq}-${process.pid}@example.test`;
const UNKNOWN_USER = '0190a7c2-6f1e-7a00-8000-0000000000bb';

describe('POST /operator/users', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('creates a verified user owning a new account and org on the install default plan', async () => {
    const address = email();
    const res = await t.operator('POST', '/operator/users', { email: address, org_name: 'Bootstrap Corp' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json() as Created;
    assert.deepEqual(Object.keys(body).sort(), ['account_id', 'org_id', 'org_slug', 'user_id']);
    assert.equal(body.org_slug, 'bootstrap-corp');
    const db = t.services.db;
    const [user] = await db.query<{ email: string; email_verified_at: Date | null }>('SELECT email, email_verified_at FROM users WHERE id = $1', [body.user_id]);
    assert.equal(user!.email, address);
    assert.ok(user!.email_verified_at instanceof Date, 'the user is verified');
    const [account] = await db.query<{ owner_user_id: string; plan_id: string }>('SELECT owner_user_id, plan_id FROM accounts WHERE id = $1', [body.account_id]);
    assert.deepEqual(account, { owner_user_id: body.user_id, plan_id: 'team' });
    const [org] = await db.query<{ account_id: string; name: string; slug: string }>('SELECT account_id, name, slug FROM orgs WHERE id = $1', [body.org_id]);
    assert.deepEqual(org, { account_id: body.account_id, name: 'Bootstrap Corp', slug: 'bootstrap-corp' });
    const members = await db.query<{ user_id: string; role: string }>('SELECT user_id, role FROM memberships WHERE org_id = $1', [body.org_id]);
    assert.deepEqual(members, [{ user_id: body.user_id, role: 'Owner' }]);
  });

  it('takes plan_id, and refuses an unknown one with 400', async () => {
    const res = await t.operator('POST', '/operator/users', { email: email(), plan_id: 'free' });
    assert.equal(res.statusCode, 201, res.body);
    const [account] = await t.services.db.query<{ plan_id: string }>('SELECT plan_id FROM accounts WHERE id = $1', [(res.json() as Created).account_id]);
    assert.equal(account!.plan_id, 'free');

    const address = email();
    const bad = await t.operator('POST', '/operator/users', { email: address, plan_id: 'enterprise' });
    assert.equal(bad.statusCode, 400);
    assert.equal((bad.json() as ErrorBody).error.field, 'plan_id');
    assert.deepEqual(await t.services.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [address]), []);
  });

  it('treats email case-insensitively: a second user for the same address is 409', async () => {
    const local = `alice${++seq}`;
    assert.equal((await t.operator('POST', '/operator/users', { email: `${local}@x.example` })).statusCode, 201);
    const dup = await t.operator('POST', '/operator/users', { email: `${local.toUpperCase()}@X.example` });
    assert.equal(dup.statusCode, 409);
    assert.equal((dup.json() as ErrorBody).error.field, 'email');
    const rows = await t.services.db.query('SELECT 1 FROM users WHERE lower(email) = $1', [`${local}@x.example`]);
    assert.equal(rows.length, 1);
  });

  it('gives orgs of the same name distinct slugs', async () => {
    const a = (await t.operator('POST', '/operator/users', { email: email(), org_name: 'Acme' })).json() as Created;
    const b = (await t.operator('POST', '/operator/users', { email: email(), org_name: 'Acme' })).json() as Created;
    const c = (await t.operator('POST', '/operator/users', { email: email(), org_name: 'ACME!' })).json() as Created;
    assert.deepEqual([a.org_slug, b.org_slug, c.org_slug], ['acme', 'acme-2', 'acme-3']);
  });

  it('gives concurrent creations of one org name distinct slugs, none failing', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => t.operator('POST', '/operator/users', { email: email(), org_name: 'Race' })));
    assert.deepEqual(results.map((r) => r.statusCode), [201, 201, 201, 201, 201, 201], results.map((r) => r.body).join('\n'));
    const slugs = results.map((r) => (r.json() as Created).org_slug).sort();
    assert.deepEqual(slugs, ['race', 'race-2', 'race-3', 'race-4', 'race-5', 'race-6']);
  });

  it('refuses a malformed email and unknown keys', async () => {
    assert.equal((await t.operator('POST', '/operator/users', { email: 'not-an-email' })).statusCode, 400);
    assert.equal((await t.operator('POST', '/operator/users', { email: email(), role: 'admin' })).statusCode, 422);
    const blank = await t.operator('POST', '/operator/users', { email: email(), org_name: '   ' });
    assert.deepEqual([blank.statusCode, (blank.json() as ErrorBody).error.field], [400, 'org_name']);
  });
});

describe('POST /operator/users with default_plan = founding', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { default_plan: 'founding' } }); });
  after(async () => { await t.close(); });

  it('puts new users on the install default plan', async () => {
    const tenant = await createTenant(t);
    const [account] = await t.services.db.query<{ plan_id: string }>('SELECT plan_id FROM accounts WHERE id = $1', [tenant.accountId]);
    assert.equal(account!.plan_id, 'founding');
  });
});

describe('POST /operator/users/{id}/api-tokens', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const mint = (userId: string, body: Record<string, unknown>) => t.operator('POST', `/operator/users/${userId}/api-tokens`, { name: 'ci', scopes: ['targets:read'], ...body });

  it('returns the token once; the store keeps only its prefix and an argon2id hash', async () => {
    const tenant = await createTenant(t);
    const res = await mint(tenant.userId, { scopes: ['targets:read', 'incidents:write'], org_id: tenant.orgId });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json() as Minted;
    assert.deepEqual(Object.keys(body).sort(), ['expires_at', 'id', 'org_id', 'prefix', 'scopes', 'token']);
    assert.match(body.token, /^sm_live_[A-Za-z0-9_-]{43}$/);
    assert.equal(body.prefix, body.token.slice(0, 16));
    assert.deepEqual(body.scopes, ['targets:read', 'incidents:write']);
    assert.equal(body.org_id, tenant.orgId);
    assert.equal(body.expires_at, null);

    const [row] = await t.services.db.query<{ prefix: string; token_hash: string; whole: string }>(
      'SELECT prefix, token_hash, row_to_json(a)::text AS whole FROM api_tokens a WHERE id = $1', [body.id]);
    assert.equal(row!.prefix, body.prefix);
    assert.match(row!.token_hash, /^\$argon2id\$/);
    assert.ok(await verify(row!.token_hash, body.token));
    assert.ok(!row!.whole.includes(body.token), 'the token itself is never stored');

    const me = await t.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(body.token) });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().id, tenant.userId);
  });

  it('binds only to an org of the user, and 404s an unknown user', async () => {
    const owner = await createTenant(t);
    const stranger = await createTenant(t);
    const foreign = await mint(owner.userId, { org_id: stranger.orgId });
    assert.equal(foreign.statusCode, 400);
    assert.equal((foreign.json() as ErrorBody).error.field, 'org_id');
    const unbound = await mint(owner.userId, {});
    assert.equal(unbound.statusCode, 201);
    assert.equal((unbound.json() as Minted).org_id, null);

    const blank = await mint(owner.userId, { name: '  ' });
    assert.deepEqual([blank.statusCode, (blank.json() as ErrorBody).error.field], [400, 'name']);

    const missing = await mint(UNKNOWN_USER, {});
    assert.equal(missing.statusCode, 404);
    assert.equal((missing.json() as ErrorBody).error.code, 'NOT_FOUND');
    const live = await t.services.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [owner.userId]);
    assert.equal(live.length, 1, 'only the unbound token was stored');
  });

  it('takes expires_in_days from 1 to 365 and refuses values outside', async () => {
    const tenant = await createTenant(t);
    for (const days of [1, 365]) {
      const res = await mint(tenant.userId, { expires_in_days: days });
      assert.equal(res.statusCode, 201, res.body);
      const expires = Date.parse((res.json() as Minted).expires_at!);
      assert.ok(Math.abs(expires - (t.clock.now().getTime() + days * 86_400_000)) < 60_000, `${days} days`);
    }
    for (const days of [0, 366, -1, 1.5]) {
      const res = await mint(tenant.userId, { expires_in_days: days });
      assert.equal(res.statusCode, 400, `${days} days`);
      assert.equal((res.json() as ErrorBody).error.field, 'expires_in_days');
    }
  });

  it('refuses a user without a verified email with 403 EMAIL_NOT_VERIFIED and stores nothing', async () => {
    const tenant = await createTenant(t);
    await t.services.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [tenant.userId]);
    const res = await mint(tenant.userId, {});
    assert.equal(res.statusCode, 403, res.body);
    assert.equal((res.json() as ErrorBody).error.code, 'EMAIL_NOT_VERIFIED');
    assert.deepEqual(await t.services.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [tenant.userId]), []);
  });

  it('writes the api_token.created audit row in the same transaction as the token (STYLE 13)', async () => {
    const tenant = await createTenant(t);
    const ok = await mint(tenant.userId, { org_id: tenant.orgId });
    assert.equal(ok.statusCode, 201, ok.body);
    const [row] = await t.services.db.query<{ actor_type: string; org_id: string; entity_type: string; details: { user_id: string } }>(
      `SELECT actor_type, org_id, entity_type, details FROM audit_log WHERE action = 'api_token.created' AND entity_id = $1`, [(ok.json() as Minted).id]);
    assert.deepEqual({ ...row, details: row!.details.user_id }, { actor_type: 'operator', org_id: tenant.orgId, entity_type: 'api_token', details: tenant.userId });

    // An audit write that fails takes the token with it: no token is left that the log never saw.
    await t.services.db.query(`CREATE FUNCTION zz_refuse_token_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.action = 'api_token.created' AND NEW.details->>'user_id' = '${tenant.userId}' THEN RAISE EXCEPTION 'audit refused'; END IF; RETURN NEW; END $$`);
    await t.services.db.query('CREATE TRIGGER zz_refuse_token_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION zz_refuse_token_audit()');
    try {
      assert.equal((await mint(tenant.userId, {})).statusCode, 500);
    } finally {
      await t.services.db.query('DROP TRIGGER zz_refuse_token_audit ON audit_log');
      await t.services.db.query('DROP FUNCTION zz_refuse_token_audit()');
    }
    const rows = await t.services.db.query('SELECT 1 FROM api_tokens WHERE user_id = $1', [tenant.userId]);
    assert.equal(rows.length, 1, 'only the first, audited token was stored');
  });

  it("counts tokens against the user's max_api_tokens_per_user", async () => {
    const tenant = await createTenant(t, { plan: 'free' });
    for (let i = 0; i < 5; i++) assert.equal((await mint(tenant.userId, {})).statusCode, 201);
    const over = await mint(tenant.userId, {});
    assert.equal(over.statusCode, 422);
    assert.deepEqual((over.json() as { error: { code: string; quota: string } }).error.code, 'QUOTA_EXCEEDED');
    assert.equal((over.json() as { error: { quota: string } }).error.quota, 'max_api_tokens_per_user');
    await t.services.quotaEvents.flush();
    const events = await t.services.db.query<{ account_id: string; user_id: string }>(
      "SELECT account_id, user_id FROM quota_events WHERE quota = 'max_api_tokens_per_user' AND user_id = $1", [tenant.userId]);
    assert.deepEqual(events, [{ account_id: tenant.accountId, user_id: tenant.userId }], 'the refusal names whose cap it was, though the operator asked');
  });
});
