import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ConfigError, loadConfig, type ConfigValue } from '../src/config/load.js';
import { createServices, installDefaultPlan, type Services } from '../src/services.js';
import { hmacSha256 } from '../src/shared/ids.js';
import { TEST_KEK } from './helpers/app.js';
import { createTestStore, type TestStore } from './helpers/store.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'keepwatch-services-'));
  dirs.push(dir);
  return dir;
};
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const silent = pino({ level: 'silent' });

/** Boots the services on `store` with `overrides`, runs `fn`, and closes them again. */
async function boot(store: TestStore, overrides: Record<string, ConfigValue | undefined>, fn: (s: Services) => Promise<void> | void = () => {}): Promise<void> {
  const config = loadConfig({ env: {}, cwd: tempDir(), overrides: { 'metrics.enabled': false, 'security.credentials_kek_base64': TEST_KEK, ...overrides } });
  const services = await createServices(config, { db: store.db, log: silent });
  try {
    await fn(services);
  } finally {
    await services.close();
  }
}

const refusesSalt = (err: unknown) => err instanceof ConfigError && err.key === 'auth.fingerprint_salt' && /auth\.fingerprint_salt_rotate/.test(err.message);

describe('services: fingerprint salt (service-api.md, Session and CSRF 3)', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('refuses a changed salt unless auth.fingerprint_salt_rotate is set', async () => {
    const dataDir = tempDir();
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 'salt-a' });
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 'salt-a' });
    await assert.rejects(boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 'salt-b' }), refusesSalt);
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 'salt-b', 'auth.fingerprint_salt_rotate': true }, (s) => {
      assert.equal(s.fingerprint.hash('203.0.113.7'), hmacSha256('salt-b', '203.0.113.7'));
    });
    // The rotated salt is now the store's: it boots without the override, the old one no longer does.
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 'salt-b' });
    await assert.rejects(boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 'salt-a' }), refusesSalt);
  });
});

describe('services: generated fingerprint salt', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('generates a salt into data_dir (mode 0600) when none is configured, and reuses it', async () => {
    const dataDir = join(tempDir(), 'data');
    const file = join(dataDir, 'fingerprint-salt');
    let first = '';
    await boot(store, { data_dir: dataDir }, (s) => { first = s.fingerprint.hash('ua')!; });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const salt = readFileSync(file, 'utf8').trim();
    assert.ok(salt.length >= 32);
    assert.equal(first, hmacSha256(salt, 'ua'));
    await boot(store, { data_dir: dataDir }, (s) => { assert.equal(s.fingerprint.hash('ua'), first); });
    assert.equal(readFileSync(file, 'utf8').trim(), salt);
    // Another data_dir generates another salt, which this store refuses.
    await assert.rejects(boot(store, { data_dir: tempDir() }), refusesSalt);
  });
});

// service-api.md, "Plan quotas" and "Rate budgets", as the spec prints them.
const SPEC_TABLE = `
| max_orgs | 1 | 3 | 5 | 10 |
| max_targets | 20 | 50 | 50 | 150 |
| min_check_interval_secs | 180 | 60 | 60 | 30 |
| retention_days | 30 | 90 | 90 | 395 |
| raw_days | 30 | 30 | 30 | 30 |
| evidence_days | 7 | 7 | 7 | 7 |
| max_flow_steps | 30 | 30 | 30 | 30 |
| max_flow_checks | 0 | 1 | 3 | 10 |
| max_regions | 3 | unlimited | unlimited | unlimited |
| max_members | 3 | 5 | 5 | 15 |
| max_pending_invitations | 10 | 15 | 15 | 25 |
| max_api_tokens_per_user | 5 | 7 | 7 | 10 |
| max_status_pages | 1 | 2 | 2 | 5 |
| max_public_components | 15 | 30 | 30 | 75 |
| max_share_links_per_monitor | 1 | 3 | 3 | 5 |
| max_shared_monitors | 2 | 5 | 5 | 10 |
| max_maintenance_windows | 20 | 30 | 30 | 50 |
| max_notification_channels | 20 | 30 | 30 | 50 |
| max_escalation_policies | 0 | 0 | 0 | 50 |
| max_on_call_schedules | 0 | 0 | 0 | 25 |
| max_logo_size_bytes | 1048576 | 1048576 | 1048576 | 1048576 |
| api_writes_per_minute | 600 | 900 | 1200 | 1800 |
| api_reads_per_minute | 6000 | 9000 | 12000 | 18000 |
| bulk_ops_per_minute | 30 | 45 | 60 | 90 |
| test_now_per_minute | 60 | 90 | 120 | 180 |
| check_now_per_minute | 60 | 90 | 120 | 180 |`;

const PLANS = ['free', 'founding', 'pro', 'team'] as const;

/** plan -> column -> value (null: unlimited). */
function specPlans(): Record<string, Record<string, number | null>> {
  const out: Record<string, Record<string, number | null>> = Object.fromEntries(PLANS.map((p) => [p, {}]));
  for (const line of SPEC_TABLE.trim().split('\n')) {
    const [column, ...values] = line.split('|').map((s) => s.trim()).filter(Boolean);
    values.forEach((v, i) => { out[PLANS[i]!]![column!] = v === 'unlimited' ? null : Number(v); });
  }
  return out;
}

async function planRows(store: TestStore): Promise<Record<string, Record<string, unknown>>> {
  const rows = await store.db.query<Record<string, unknown> & { id: string }>('SELECT * FROM plans ORDER BY id');
  return Object.fromEntries(rows.map((r) => [r.id, r]));
}

describe('services: operator secret and plan catalog', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('generates the operator secret into data_dir (mode 0600) and reuses it', async () => {
    const dataDir = tempDir();
    const file = join(dataDir, 'operator-secret');
    let secret = null as string | null;
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's' }, (s) => { secret = s.operatorSecret; });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(secret, readFileSync(file, 'utf8').trim());
    assert.ok(secret!.length >= 32);
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's' }, (s) => { assert.equal(s.operatorSecret, secret); });
  });

  it('uses a configured operator secret as is, and has none with auto_secret off', async () => {
    const dataDir = tempDir();
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's', 'operator.secret': 'configured' }, (s) => { assert.equal(s.operatorSecret, 'configured'); });
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's', 'operator.auto_secret': false }, (s) => { assert.equal(s.operatorSecret, null); });
    assert.equal(existsSync(join(dataDir, 'operator-secret')), false);
  });

  it("seeds exactly the spec's plans and values", async () => {
    await boot(store, { data_dir: tempDir(), 'auth.fingerprint_salt': 's' });
    const rows = await planRows(store);
    assert.deepEqual(Object.keys(rows).sort(), [...PLANS].sort());
    const spec = specPlans();
    for (const plan of PLANS) {
      for (const [column, value] of Object.entries(spec[plan]!)) assert.equal(rows[plan]![column], value, `${plan}.${column}`);
    }
    assert.equal(rows.free!.max_regions, 3);
    for (const plan of ['founding', 'pro', 'team']) assert.equal(rows[plan]!.max_regions, null, `${plan} has unlimited regions`);
    assert.deepEqual(PLANS.map((p) => rows[p]!.name), ['Free', 'Founding', 'Pro', 'Team']);
    assert.equal(await installDefaultPlan(store.db), 'team', 'a self-hosted install defaults to team');
  });

  it('applies plans.<id>.<column> from configuration at every boot', async () => {
    const dataDir = tempDir();
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's', 'plans.team.max_targets': 500, 'plans.founding.max_regions': 4 });
    let rows = await planRows(store);
    assert.equal(rows.team!.max_targets, 500);
    assert.equal(rows.founding!.max_regions, 4);
    assert.equal(rows.pro!.max_targets, 50, 'other plans keep their values');
    assert.equal(rows.team!.max_orgs, 10, 'other columns keep their values');
    // Dropping the key restores the spec's value on the next boot.
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's' });
    rows = await planRows(store);
    assert.equal(rows.team!.max_targets, 150);
    assert.equal(rows.founding!.max_regions, null);
  });
});

describe('services: default_plan (service-api.md, Limits 8)', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('is recorded only at first boot', async () => {
    const dataDir = tempDir();
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's', default_plan: 'free' });
    assert.equal(await installDefaultPlan(store.db), 'free');
    await boot(store, { data_dir: dataDir, 'auth.fingerprint_salt': 's', default_plan: 'pro' });
    assert.equal(await installDefaultPlan(store.db), 'free');
  });
});

describe('services: credentials key of the embedded store', () => {
  it('generates a key into data_dir (mode 0600) when none is configured and the process owns the store, and reuses it', async () => {
    const dir = tempDir();
    const open = async () => {
      const config = loadConfig({ env: {}, cwd: dir, overrides: { data_dir: dir, 'metrics.enabled': false } });
      const services = await createServices(config, { log: silent });
      try {
        assert.equal(services.db.kind, 'pglite');
        const sealed = services.sealer.seal('s3cret');
        assert.match(sealed, /^kw1:/, 'sealed, not stored plain');
        return { keyId: services.sealer.keyId, sealed };
      } finally {
        await services.close();
      }
    };
    const first = await open();
    const file = join(dir, 'credentials-kek');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').length, 32);
    const second = await open();
    assert.equal(second.keyId, first.keyId);
  });

  it('generates one on a store it does not own too, and refuses a node whose generated key is not the store\'s', async () => {
    const store = await createTestStore();
    try {
      const first = tempDir();
      let keyId: string | null = null;
      const generated = { 'security.credentials_kek_base64': undefined, 'auth.fingerprint_salt': 's' };
      await boot(store, { ...generated, data_dir: first }, (s) => {
        keyId = s.sealer.keyId;
        assert.match(s.sealer.seal('x'), /^kw1:/, 'sealed, not stored plain');
      });
      assert.ok(existsSync(join(first, 'credentials-kek')));
      await boot(store, { ...generated, data_dir: first }, (s) => assert.equal(s.sealer.keyId, keyId));
      // A second node with a data_dir of its own would generate another key: it stops, naming the setting.
      const second = tempDir();
      await assert.rejects(boot(store, { ...generated, data_dir: second }), (err: unknown) =>
        err instanceof ConfigError && err.key === 'security.credentials_kek_base64' && err.message.includes(join(second, 'credentials-kek')) && err.message.includes(keyId!));
      // Given the first node's key, it boots.
      const kek = readFileSync(join(first, 'credentials-kek'), 'utf8').trim();
      await boot(store, { ...generated, data_dir: second, 'security.credentials_kek_base64': kek }, (s) => assert.equal(s.sealer.keyId, keyId));
    } finally {
      await store.drop();
    }
  });

  it('records a configured key that differs from the store\'s as the new one, with a warning', async () => {
    const store = await createTestStore();
    try {
      const a = randomBytes(32).toString('base64');
      const b = randomBytes(32).toString('base64');
      await boot(store, { data_dir: tempDir(), 'auth.fingerprint_salt': 's', 'security.credentials_kek_base64': a });
      const warnings: string[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => { warnings.push(JSON.parse(line).msg as string); } });
      const config = loadConfig({ env: {}, cwd: tempDir(), overrides: { 'metrics.enabled': false, data_dir: tempDir(), 'auth.fingerprint_salt': 's', 'security.credentials_kek_base64': b } });
      const services = await createServices(config, { db: store.db, log });
      await services.close();
      assert.ok(warnings.some((w) => /cannot be opened/.test(w)), warnings.join('\n'));
      // A node generating its own key is still refused: the store now seals under b.
      await assert.rejects(boot(store, { data_dir: tempDir(), 'auth.fingerprint_salt': 's', 'security.credentials_kek_base64': undefined }), ConfigError);
      await boot(store, { data_dir: tempDir(), 'auth.fingerprint_salt': 's', 'security.credentials_kek_base64': b });
    } finally {
      await store.drop();
    }
  });
});

describe('services: buffer pool of the embedded store', () => {
  const sharedBuffers = async (overrides: Record<string, ConfigValue>) => {
    const dir = tempDir();
    const config = loadConfig({ env: {}, cwd: dir, overrides: { data_dir: dir, 'metrics.enabled': false, ...overrides } });
    const services = await createServices(config, { log: silent });
    try {
      return (await services.db.query<{ shared_buffers: string }>('SHOW shared_buffers'))[0]!.shared_buffers;
    } finally {
      await services.close();
    }
  };

  it('is 32 MB unless pglite.shared_buffers_mb says otherwise', async () => {
    assert.equal(await sharedBuffers({}), '32MB');
    assert.equal(await sharedBuffers({ 'pglite.shared_buffers_mb': 8 }), '8MB');
  });
});
