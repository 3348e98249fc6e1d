// Builds the process's shared services from the configuration: store, caches, writers, limiter.
// One `createServices` serves `keepwatch serve` and the tests.
import { join, resolve } from 'node:path';
import pino, { type Logger } from 'pino';
import { cfg, ConfigError, sourceOf, type Config } from './config/load.js';
import { randomBytes } from 'node:crypto';
import { CREDENTIALS_KEK_FILE, FINGERPRINT_SALT_FILE, OPERATOR_SECRET_FILE, readOrCreateSecret } from './config/secrets.js';
import { connectPostgres } from './db/database-url.js';
import { openPglite, type Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { TokenVerifier } from './identity/api-tokens.js';
import { Fingerprinter, loginAttemptWriter, type LoginAttempt } from './identity/login-attempts.js';
import { OrgDirectory } from './orgs/directory.js';
import { PlanService, seedPlans } from './plans/service.js';
import { quotaEventWriter, type QuotaEvent } from './plans/quota-events.js';
import { RateLimiter } from './plans/rate-budget.js';
import { LOCAL_REGION, RegionCatalog } from './regions/catalog.js';
import { DenyListHolder, installSighupReload } from './net/deny-lists.js';
import { NetworkGuard } from './net/guard.js';
import { createSealer, KEK_CONFIG_KEY, type Sealer } from './shared/seal.js';
import type { BatchWriter } from './shared/batch-writer.js';
import { RdapBootstrap } from './rdap/index.js';
import { incidentFold } from './incidents/index.js';
import { Mailer } from './mail/mailer.js';
import { Deliverer } from './notifications/index.js';
import { ResultWriter } from './results/index.js';
import { PingIngest, PingRateLimiter } from './heartbeat/index.js';
import { systemClock, type Clock } from './shared/context.js';
import { sha256 } from './shared/ids.js';

export interface Services {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  dataDir: string;
  tokens: TokenVerifier;
  orgs: OrgDirectory;
  plans: PlanService;
  regions: RegionCatalog;
  /** The RDAP bootstrap registry, fetched on first use (domain_expiry). */
  rdap: RdapBootstrap;
  rateLimiter: RateLimiter;
  /** Check results: buffered for probes, at once for hand-set states. */
  results: ResultWriter;
  /** Heartbeat pings, group-committed. */
  pings: PingIngest;
  /** The per-token heartbeat ping limit (in memory, per node). */
  pingLimiter: PingRateLimiter;
  loginAttempts: BatchWriter<LoginAttempt>;
  quotaEvents: BatchWriter<QuotaEvent>;
  fingerprint: Fingerprinter;
  /** Seals credentials and secrets at rest under `security.credentials_kek_base64`. */
  sealer: Sealer;
  /** Refuses targets in blocked address ranges unless `security.allow_private_targets`. */
  guard: NetworkGuard;
  /** Outgoing mail (SMTP at `mail.smtp_url`, else the log). */
  mailer: Mailer;
  /** Sends notifications (outbox worker, channel test sends) through the guard. */
  deliverer: Deliverer;
  /** The live deny-lists (swapped whole on SIGHUP with `abuse.hot_reload_enabled`). */
  denyLists: DenyListHolder;
  /** null: the operator surface answers 404. */
  operatorSecret: string | null;
  /** Stops timers and flushes buffered writes; closes the store when it was opened here. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  log?: Logger;
  /** A store opened by the caller (tests); otherwise opened from the configuration and closed by `close()`. */
  db?: Db;
}

export function createLogger(config: Config): Logger {
  return pino({
    level: cfg.str(config, 'log.level'),
    // Secrets never reach a log line, whatever a caller passes.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.secret'], censor: '[redacted]' },
  });
}

export async function openStore(config: Config): Promise<Db> {
  const url = cfg.optStr(config, 'database_url');
  return url ? connectPostgres(url, sourceOf(config, 'database_url')) : openPglite({ dataDir: resolve(cfg.str(config, 'data_dir'), 'pg'), sharedBuffersMb: cfg.int(config, 'pglite.shared_buffers_mb') });
}

export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const log = options.log ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(cfg.str(config, 'data_dir'));
  const db = options.db ?? (await openStore(config));
  try {
    await prepareStore(db, config, dataDir, log);
  } catch (err) {
    if (!options.db) await db.close();
    throw err;
  }
  let sealer: Sealer;
  let denyLists: DenyListHolder;
  try {
    // Secrets are sealed on every store: without a configured key, under one generated beside the
    // data. Nodes sharing a PostgreSQL server must share the key; `checkSealingKey` refuses a node
    // whose generated key is not the store's.
    const generated = cfg.optStr(config, KEK_CONFIG_KEY) ? null : join(dataDir, CREDENTIALS_KEK_FILE);
    sealer = createSealer(config, log, () => readOrCreateSecret(dataDir, CREDENTIALS_KEK_FILE, () => randomBytes(32).toString('base64')).value);
    await checkSealingKey(db, sealer, generated, log);
    denyLists = loadDenyLists(config);
  } catch (err) {
    if (!options.db) await db.close();
    throw err;
  }
  const fingerprint = new Fingerprinter(fingerprintSalt(config, dataDir));
  await checkSaltUnchanged(db, config, fingerprint);
  const uninstallSighup = installSighupReload(denyLists, log, { enabled: cfg.bool(config, 'abuse.hot_reload_enabled') });
  const cacheTtlMs = cfg.int(config, 'auth.token_cache_ttl_secs') * 1000;
  const rateLimiter = new RateLimiter(db, clock, log, cfg.int(config, 'rate_limit.sync_interval_ms'));
  rateLimiter.start();
  const loginAttempts = loginAttemptWriter(db, fingerprint, log);
  const quotaEvents = quotaEventWriter(db, fingerprint, log);
  const results = new ResultWriter(db, log, [incidentFold(clock)]);
  results.rollups.start();
  const pings = new PingIngest({ db, results, clock, log });
  const guard = new NetworkGuard({ allowPrivate: cfg.bool(config, 'security.allow_private_targets') });
  const mailer = new Mailer(cfg.optStr(config, 'mail.smtp_url'), cfg.str(config, 'mail.from'), log);
  const smsUrl = cfg.optStr(config, 'sms.provider_url');
  const deliverer = new Deliverer(guard, mailer, smsUrl ? { url: smsUrl, token: cfg.optStr(config, 'sms.provider_token') } : null);
  return {
    config, db, clock, log, dataDir, fingerprint, rateLimiter, loginAttempts, quotaEvents, results, pings,
    pingLimiter: new PingRateLimiter(clock),
    sealer, denyLists, guard, mailer, deliverer,
    tokens: new TokenVerifier(db, clock, cacheTtlMs, (err) => log.warn({ err }, 'api token last_used_at write failed')),
    orgs: new OrgDirectory(db, clock, cacheTtlMs),
    plans: new PlanService(db, clock, cfg.int(config, 'plan_cache_ttl_secs') * 1000, cfg.str(config, 'deployment.mode') === 'self_hosted'),
    regions: new RegionCatalog(db, clock, { regionId: LOCAL_REGION, runsFlows: cfg.bool(config, 'flow.enabled') }),
    rdap: new RdapBootstrap(cfg.str(config, 'checker.rdap_bootstrap_url'), clock),
    operatorSecret: operatorSecret(config, dataDir, log),
    async close() {
      uninstallSighup();
      await rateLimiter.stop();
      await pings.flush();
      await Promise.all([loginAttempts.flush(), quotaEvents.flush(), results.flush(), deliverer.close()]);
      results.rollups.stop();
      mailer.close();
      if (!options.db) await db.close();
    },
  };
}

/** Migrations, the plan catalog and first-run settings. */
export async function prepareStore(db: Db, config: Config, _dataDir: string, log: Logger): Promise<void> {
  const applied = await migrate(db);
  if (applied.length) log.info({ applied }, 'migrations applied');
  const planValues = Object.fromEntries(Object.entries(config).filter(([k, v]) => k.startsWith('plans.') && v !== undefined)) as Record<string, number>;
  await seedPlans(db, planValues);
  // default_plan applies only at first-run seeding: later edits do not move the install's default.
  await db.query(`INSERT INTO settings (key, value) VALUES ('default_plan', $1) ON CONFLICT (key) DO NOTHING`,
    [JSON.stringify(cfg.str(config, 'default_plan'))]);
}

/** A bad deny-list line refuses the boot, naming the key and `file:line`. */
function loadDenyLists(config: Config): DenyListHolder {
  const paths = { urlPatterns: cfg.optStr(config, 'abuse.url_patterns_file'), domains: cfg.optStr(config, 'abuse.domain_denylist_file') };
  try {
    return new DenyListHolder(paths);
  } catch (err) {
    const key = paths.domains && (err as Error).message.includes(paths.domains) ? 'abuse.domain_denylist_file' : 'abuse.url_patterns_file';
    throw new ConfigError(key, (err as Error).message);
  }
}

function fingerprintSalt(config: Config, dataDir: string): string {
  return cfg.optStr(config, 'auth.fingerprint_salt') ?? readOrCreateSecret(dataDir, FINGERPRINT_SALT_FILE).value;
}

/** Rotating the salt orphans every stored hash, so it refuses to boot without the explicit override. */
async function checkSaltUnchanged(db: Db, config: Config, fingerprint: Fingerprinter): Promise<void> {
  const check = JSON.stringify(sha256(fingerprint.hash('keepwatch-salt-check')!));
  const [row] = await db.query<{ value: string }>(`SELECT value FROM settings WHERE key = 'fingerprint_salt_check'`);
  if (row && JSON.stringify(row.value) !== check && !cfg.bool(config, 'auth.fingerprint_salt_rotate')) {
    throw new ConfigError('auth.fingerprint_salt', 'differs from the salt this store was first used with: a node joining others on one PostgreSQL needs their salt; to rotate it on purpose, set auth.fingerprint_salt_rotate = true');
  }
  await db.query(`INSERT INTO settings (key, value) VALUES ('fingerprint_salt_check', $1)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, [check]);
}

/**
 * The store records the id of the key its secrets are sealed under, the first boot's. A node whose
 * generated key is another (its own data_dir, beside a shared store) stops: its seals would be
 * unreadable to the other nodes and theirs to it. A configured key that differs is the operator's
 * choice (a new key): it is recorded, with a warning that values sealed before cannot be opened.
 */
async function checkSealingKey(db: Db, sealer: Sealer, generatedFile: string | null, log: Logger): Promise<void> {
  const keyId = JSON.stringify(sealer.keyId);
  // The first node to record its key wins, also when several boot at once on a new store.
  await db.query(`INSERT INTO settings (key, value) VALUES ('credentials_key_id', $1) ON CONFLICT (key) DO NOTHING`, [keyId]);
  const [row] = await db.query<{ value: string }>(`SELECT value FROM settings WHERE key = 'credentials_key_id'`);
  if (!row || row.value === sealer.keyId) return;
  if (generatedFile) {
    throw new ConfigError(KEK_CONFIG_KEY, `unset, and the key generated into ${generatedFile} is not the one this store's secrets are sealed under (key id ${row.value}); nodes sharing a store need one key: set ${KEK_CONFIG_KEY} on every node, or give this node that key's file`);
  }
  log.warn({ stored: row.value, configured: sealer.keyId }, 'the configured credentials key is not the one the store sealed under before: values sealed under the old key cannot be opened');
  await db.query(`UPDATE settings SET value = $1, updated_at = now() WHERE key = 'credentials_key_id'`, [keyId]);
}

function operatorSecret(config: Config, dataDir: string, log: Logger): string | null {
  const configured = cfg.optStr(config, 'operator.secret');
  if (configured) return configured;
  if (!cfg.bool(config, 'operator.auto_secret')) return null;
  const { value, created } = readOrCreateSecret(dataDir, OPERATOR_SECRET_FILE);
  log.info({ file: `${dataDir}/${OPERATOR_SECRET_FILE}` }, created ? 'generated the operator secret' : 'using the operator secret');
  return value;
}

/** The install's default plan, as seeded on first run. */
export async function installDefaultPlan(db: Db): Promise<string> {
  const [row] = await db.query<{ value: string }>(`SELECT value FROM settings WHERE key = 'default_plan'`);
  return row?.value ?? 'team';
}
