import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig, sourceOf, type LoadOptions } from '../../src/config/load.js';
import { CONFIG_KEYS, envNameOf } from '../../src/config/schema.js';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keepwatch-config-'));
  dirs.push(dir);
  return dir;
}

/** A working directory holding `keepwatch.toml` with `toml`. */
function withToml(toml: string, name = 'keepwatch.toml'): string {
  const dir = tempDir();
  writeFileSync(join(dir, name), toml);
  return dir;
}

/** Loads with an isolated environment and working directory unless the caller gives them. */
const load = (o: LoadOptions = {}) => loadConfig({ env: {}, cwd: tempDir(), ...o });

function assertRefuses(fn: () => unknown, key: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.equal(err.key, key);
    assert.match(err.message, new RegExp(key.replace(/[.[\]]/g, '\\$&')));
    return true;
  });
}

describe('config: sources', () => {
  it('has the documented defaults with no file and no env, and is frozen', () => {
    const c = load();
    assert.equal(c['http.port'], 8080);
    assert.equal(c['http.host'], '127.0.0.1');
    assert.equal(c.data_dir, './data');
    assert.equal(c.database_url, undefined);
    assert.equal(c.default_plan, 'team');
    assert.equal(c['metrics.port'], 9464);
    assert.equal(c['security.allow_private_targets'], false);
    assert.equal(c['operator.secret'], undefined);
    assert.ok(Object.isFrozen(c));
  });

  it('reads keepwatch.toml from the working directory; nested tables become dotted keys', () => {
    const cwd = withToml([
      'default_plan = "free"',
      'security.allow_private_targets = true',
      '[checker]', 'per_host_max_inflight = 5',
      '[auth]', 'enabled_methods = ["magic_link"]',
      '[auth.magic_link]', 'expiry_minutes = 20',
      '[plans.team]', 'max_targets = 500',
    ].join('\n'));
    const c = load({ cwd });
    assert.equal(c.default_plan, 'free');
    assert.equal(c['security.allow_private_targets'], true);
    assert.equal(c['checker.per_host_max_inflight'], 5);
    assert.deepEqual(c['auth.enabled_methods'], ['magic_link']);
    assert.equal(c['auth.magic_link.expiry_minutes'], 20);
    assert.equal(c['plans.team.max_targets'], 500);
    assert.equal(c['plans.free.max_targets'], undefined);
  });

  it('takes configPath, then KEEPWATCH_CONFIG, over keepwatch.toml in the working directory', () => {
    const cwd = withToml('[http]\nport = 1001');
    const viaEnv = join(withToml('[http]\nport = 1002', 'env.toml'), 'env.toml');
    const viaFlag = join(withToml('[http]\nport = 1003', 'flag.toml'), 'flag.toml');
    assert.equal(load({ cwd })['http.port'], 1001);
    assert.equal(load({ cwd, env: { KEEPWATCH_CONFIG: viaEnv } })['http.port'], 1002);
    assert.equal(load({ cwd, env: { KEEPWATCH_CONFIG: viaEnv }, configPath: viaFlag })['http.port'], 1003);
  });

  it('refuses a named config file that does not exist, naming where it was named', () => {
    const missing = join(tempDir(), 'missing.toml');
    const present = join(withToml('[http]\nport = 1004', 'flag.toml'), 'flag.toml');
    assertRefuses(() => load({ configPath: missing }), '--config');
    assertRefuses(() => load({ env: { KEEPWATCH_CONFIG: missing } }), 'KEEPWATCH_CONFIG');
    assertRefuses(() => load({ env: { KEEPWATCH_CONFIG: present }, configPath: missing }), '--config');
    // The flag wins, so a stale KEEPWATCH_CONFIG under it is never read.
    assert.equal(load({ env: { KEEPWATCH_CONFIG: missing }, configPath: present })['http.port'], 1004);
  });

  it('refuses a file that is not TOML, naming the file', () => {
    const cwd = withToml('[http\nport = 1');
    assertRefuses(() => load({ cwd }), join(cwd, 'keepwatch.toml'));
  });

  it('sets any key from KEEPWATCH_ + the dotted path upper-cased with . -> __', () => {
    const c = load({ env: {
      KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS: 'true',
      KEEPWATCH_CHECKER__PER_HOST_MAX_INFLIGHT: '7',
      KEEPWATCH_AUTH__MAGIC_LINK__EXPIRY_MINUTES: '30',
      KEEPWATCH_OPERATOR__SECRET: 's3cret',
      KEEPWATCH_AUTH__ENABLED_METHODS: 'passkey, magic_link',
      KEEPWATCH_PLANS__PRO__API_READS_PER_MINUTE: '99',
      KEEPWATCH_DEFAULT_PLAN: 'pro',
    } });
    assert.equal(c['security.allow_private_targets'], true);
    assert.equal(c['checker.per_host_max_inflight'], 7);
    assert.equal(c['auth.magic_link.expiry_minutes'], 30);
    assert.equal(c['operator.secret'], 's3cret');
    assert.deepEqual(c['auth.enabled_methods'], ['passkey', 'magic_link']);
    assert.equal(c['plans.pro.api_reads_per_minute'], 99);
    assert.equal(c.default_plan, 'pro');
  });

  it('names every key by the env rule', () => {
    assert.equal(envNameOf('security.allow_private_targets'), 'KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS');
    assert.equal(envNameOf('auth.magic_link.expiry_minutes'), 'KEEPWATCH_AUTH__MAGIC_LINK__EXPIRY_MINUTES');
    assert.equal(envNameOf('data_dir'), 'KEEPWATCH_DATA_DIR');
  });

  it('reads false booleans from env', () => {
    const c = load({ env: { KEEPWATCH_OPERATOR__AUTO_SECRET: 'false', KEEPWATCH_METRICS__ENABLED: '0' } });
    assert.equal(c['operator.auto_secret'], false);
    assert.equal(c['metrics.enabled'], false);
  });

  it('accepts the aliases PORT, HOST, DATABASE_URL and KEEPWATCH_DATA_DIR', () => {
    const c = load({ env: { PORT: '9000', HOST: '0.0.0.0', DATABASE_URL: 'postgres://u@db:5432/kw', KEEPWATCH_DATA_DIR: '/var/lib/kw' } });
    assert.equal(c['http.port'], 9000);
    assert.equal(c['http.host'], '0.0.0.0');
    assert.equal(c.database_url, 'postgres://u@db:5432/kw');
    assert.equal(c.data_dir, '/var/lib/kw');
  });

  it('prefers the KEEPWATCH_ form over an alias, and ignores empty variables', () => {
    assert.equal(load({ env: { PORT: '9000', KEEPWATCH_HTTP__PORT: '9001' } })['http.port'], 9001);
    assert.equal(load({ env: { PORT: '' } })['http.port'], 8080);
  });

  it('lets env beat the file', () => {
    const cwd = withToml('data_dir = "/from/file"\n[http]\nport = 1001\nhost = "10.0.0.1"\n[security]\nallow_private_targets = false');
    const c = load({ cwd, env: { PORT: '2002', KEEPWATCH_DATA_DIR: '/from/env', KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS: 'true' } });
    assert.equal(c['http.port'], 2002);
    assert.equal(c.data_dir, '/from/env');
    assert.equal(c['security.allow_private_targets'], true);
    assert.equal(c['http.host'], '10.0.0.1');
  });

  it('remembers which variable or file set each key, for messages about its value', () => {
    const cwd = withToml('database_url = "postgres://u@file/kw"\n[http]\nport = 1001\nhost = "10.0.0.1"');
    const file = join(cwd, 'keepwatch.toml');
    const c = load({ cwd, env: { PORT: '2002', KEEPWATCH_DATA_DIR: '/from/env' }, overrides: { 'log.level': 'warn' } });
    assert.equal(sourceOf(c, 'database_url'), `database_url in ${file}`);
    assert.equal(sourceOf(c, 'http.host'), `http.host in ${file}`);
    assert.equal(sourceOf(c, 'http.port'), 'PORT', 'the environment beat the file');
    assert.equal(sourceOf(c, 'data_dir'), 'KEEPWATCH_DATA_DIR');
    assert.equal(sourceOf(c, 'log.level'), 'log.level', 'set by the caller: the key itself');
    assert.equal(sourceOf(c, 'metrics.enabled'), 'metrics.enabled', 'a default: the key itself');
    assert.equal(sourceOf(load({ env: { DATABASE_URL: 'postgres://a', KEEPWATCH_DATABASE_URL: 'postgres://b' } }), 'database_url'), 'KEEPWATCH_DATABASE_URL');
  });

  it('ignores environment variables outside the KEEPWATCH_ namespace', () => {
    const c = load({ env: { PATH: '/usr/bin', KEEPWATCHER: 'x', NODE_ENV: 'production' } });
    assert.equal(c['http.port'], 8080);
  });
});

describe('config: refusals name the key', () => {
  it('refuses an unknown key in the file', () => {
    assertRefuses(() => load({ cwd: withToml('[security]\nallow_privat_targets = true') }), 'security.allow_privat_targets');
    assertRefuses(() => load({ cwd: withToml('[nope]\nx = 1') }), 'nope.x');
    assertRefuses(() => load({ cwd: withToml('[plans.enterprise]\nmax_targets = 5') }), 'plans.enterprise.max_targets');
    // A table where a value belongs is unknown too.
    assertRefuses(() => load({ cwd: withToml('[http.port]\nvalue = 1') }), 'http.port.value');
  });

  it('refuses an unknown KEEPWATCH_ environment variable', () => {
    assertRefuses(() => load({ env: { KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGET: 'true' } }), 'KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGET');
    // The dotted form is not the env form.
    assertRefuses(() => load({ env: { 'KEEPWATCH_HTTP.PORT': '1' } }), 'KEEPWATCH_HTTP.PORT');
  });

  it('refuses an unknown key passed by the caller', () => {
    assertRefuses(() => load({ overrides: { 'http.prot': 1 } }), 'http.prot');
  });

  it('refuses wrong types in the file', () => {
    assertRefuses(() => load({ cwd: withToml('[http]\nport = "8080"') }), 'http.port');
    assertRefuses(() => load({ cwd: withToml('[checker]\nper_host_max_inflight = 1.5') }), 'checker.per_host_max_inflight');
    // A TOML float is no whole number, even one that looks like it.
    assertRefuses(() => load({ cwd: withToml('[checker]\nper_host_max_inflight = 5.0') }), 'checker.per_host_max_inflight');
    assert.equal(load({ cwd: withToml('[checker]\nper_host_max_inflight = 5') })['checker.per_host_max_inflight'], 5);
    assertRefuses(() => load({ cwd: withToml('[security]\nallow_private_targets = "true"') }), 'security.allow_private_targets');
    assertRefuses(() => load({ cwd: withToml('[auth]\nservice_name = 5') }), 'auth.service_name');
    assertRefuses(() => load({ cwd: withToml('[auth]\nservice_name = ["a"]') }), 'auth.service_name');
    assertRefuses(() => load({ cwd: withToml('[auth]\nenabled_methods = "magic_link"') }), 'auth.enabled_methods');
    assertRefuses(() => load({ cwd: withToml('[auth]\nenabled_methods = [1]') }), 'auth.enabled_methods');
    assertRefuses(() => load({ cwd: withToml('[auth]\nenabled_methods = ["password"]') }), 'auth.enabled_methods');
  });

  it('refuses wrong types in env, naming the variable', () => {
    assertRefuses(() => load({ env: { KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS: 'maybe' } }), 'KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS');
    assertRefuses(() => load({ env: { KEEPWATCH_CHECKER__PER_HOST_MAX_INFLIGHT: '2x' } }), 'KEEPWATCH_CHECKER__PER_HOST_MAX_INFLIGHT');
    assertRefuses(() => load({ env: { KEEPWATCH_PLAN_CACHE_TTL_SECS: '1.5' } }), 'KEEPWATCH_PLAN_CACHE_TTL_SECS');
    assertRefuses(() => load({ env: { PORT: 'eighty' } }), 'PORT');
    assertRefuses(() => load({ env: { KEEPWATCH_AUTH__ENABLED_METHODS: 'magic_link,password' } }), 'KEEPWATCH_AUTH__ENABLED_METHODS');
  });

  it('refuses a quota, rate or interval below 1 (service-api.md Limits 8)', () => {
    assertRefuses(() => load({ cwd: withToml('[plans.team]\nmax_targets = 0') }), 'plans.team.max_targets');
    assertRefuses(() => load({ cwd: withToml('[checker]\nper_host_max_inflight = 0') }), 'checker.per_host_max_inflight');
    assertRefuses(() => load({ cwd: withToml('plan_cache_ttl_secs = 0') }), 'plan_cache_ttl_secs');
    assertRefuses(() => load({ cwd: withToml('[plans.free]\napi_writes_per_minute = -5') }), 'plans.free.api_writes_per_minute');
    assertRefuses(() => load({ env: { KEEPWATCH_PLANS__TEAM__MAX_TARGETS: '0' } }), 'KEEPWATCH_PLANS__TEAM__MAX_TARGETS');
    assert.equal(load({ cwd: withToml('[plans.team]\nmax_targets = 1') })['plans.team.max_targets'], 1);
  });

  it('refuses 0 for every integer key but ports and the switch that 0 disables', () => {
    const zeroAllowed = ['http.port', 'metrics.port', 'auth.magic_link.rate_limit_seconds'];
    const integers = Object.entries(CONFIG_KEYS).filter(([, spec]) => spec.type === 'integer').map(([key]) => key);
    assert.ok(integers.filter((k) => k.startsWith('plans.')).length === 104);
    for (const key of integers) {
      const env = { [envNameOf(key)]: '0' };
      if (zeroAllowed.includes(key)) assert.equal(load({ env })[key], 0, key);
      else assertRefuses(() => load({ env }), envNameOf(key));
    }
  });

  it('refuses a port above 65535 and a plan column above what PostgreSQL integer holds, naming the key', () => {
    assertRefuses(() => load({ env: { PORT: '70000' } }), 'PORT');
    assertRefuses(() => load({ env: { KEEPWATCH_HTTP__PORT: '65536' } }), 'KEEPWATCH_HTTP__PORT');
    assertRefuses(() => load({ cwd: withToml('[metrics]\nport = 65536') }), 'metrics.port');
    assertRefuses(() => load({ cwd: withToml('[plans.team]\nmax_targets = 3000000000') }), 'plans.team.max_targets');
    assertRefuses(() => load({ env: { KEEPWATCH_PLANS__FREE__API_READS_PER_MINUTE: '2147483648' } }), 'KEEPWATCH_PLANS__FREE__API_READS_PER_MINUTE');
    assert.equal(load({ env: { PORT: '65535' } })['http.port'], 65535);
    assert.equal(load({ cwd: withToml('[plans.team]\nmax_targets = 2147483647') })['plans.team.max_targets'], 2147483647);
  });

  it('bounds ports by 65535 and every plan column by 2^31-1 in the key table', () => {
    assert.equal(CONFIG_KEYS['http.port']!.max, 65535);
    assert.equal(CONFIG_KEYS['metrics.port']!.max, 65535);
    const planKeys = Object.entries(CONFIG_KEYS).filter(([key]) => key.startsWith('plans.'));
    assert.ok(planKeys.length > 0 && planKeys.every(([, spec]) => spec.max === 2_147_483_647));
  });

  it('refuses an auth.gitlab.base_url that is not an https origin: plain HTTP is refused at boot (service-api.md, Linking and attestation 3)', () => {
    assertRefuses(() => load({ cwd: withToml('[auth.gitlab]\nbase_url = "http://gitlab.example.com"') }), 'auth.gitlab.base_url');
    assertRefuses(() => load({ env: { KEEPWATCH_AUTH__GITLAB__BASE_URL: 'http://gitlab.example.com' } }), 'KEEPWATCH_AUTH__GITLAB__BASE_URL');
    for (const bad of ['gitlab.example.com', 'https://gitlab.example.com/gitlab', 'https://gitlab.example.com/?a=1', 'https://u:p@gitlab.example.com']) {
      assertRefuses(() => load({ env: { KEEPWATCH_AUTH__GITLAB__BASE_URL: bad } }), 'KEEPWATCH_AUTH__GITLAB__BASE_URL');
    }
    // Stored as the origin, the form the forge's `iss` is compared with.
    assert.equal(load({ cwd: withToml('[auth.gitlab]\nbase_url = "https://gitlab.example.com/"') })['auth.gitlab.base_url'], 'https://gitlab.example.com');
  });

  it('refuses a mail.smtp_url that is not an smtp:// or smtps:// URL with a host, never echoing the value', () => {
    for (const bad of ['http://x', 'notaurl', 'smtp://', 'https://mailer:hunter2@mail.example.com']) {
      assertRefuses(() => load({ env: { KEEPWATCH_MAIL__SMTP_URL: bad } }), 'KEEPWATCH_MAIL__SMTP_URL');
      assert.throws(() => load({ env: { KEEPWATCH_MAIL__SMTP_URL: bad } }), (err: Error) => /smtp:\/\/ or smtps:\/\//.test(err.message) && !err.message.includes('hunter2'));
    }
    assertRefuses(() => load({ cwd: withToml('[mail]\nsmtp_url = "http://x"') }), 'mail.smtp_url');
    for (const good of ['smtp://mail.example.com:587', 'smtps://mailer:hunter2@mail.example.com', 'smtp://127.0.0.1:2525?pool=true']) {
      assert.equal(load({ env: { KEEPWATCH_MAIL__SMTP_URL: good } })['mail.smtp_url'], good);
    }
  });

  // URL keys other than the origins and mail.smtp_url above: the schemes each takes, from env and file alike.
  const urlKeys: Array<{ key: string; env: string; toml: string; bad: string[]; good: string[] }> = [
    {
      key: 'checker.rdap_bootstrap_url', env: 'KEEPWATCH_CHECKER__RDAP_BOOTSTRAP_URL', toml: '[checker]\nrdap_bootstrap_url = "ftp://x"',
      bad: ['ftp://x', 'notaurl', 'data.iana.org/rdap/dns.json'],
      good: ['http://mirror.internal/dns.json', 'https://data.iana.org/rdap/dns.json', 'file:///etc/keepwatch/rdap-dns.json'],
    },
    {
      key: 'sms.provider_url', env: 'KEEPWATCH_SMS__PROVIDER_URL', toml: '[sms]\nprovider_url = "ftp://sms.example.com"',
      bad: ['notaurl', 'ftp://sms.example.com', 'sms.example.com/send'],
      good: ['https://sms.example.com/send'],
    },
  ];
  for (const { key, env, toml, bad, good } of urlKeys) {
    it(`refuses a ${key} of another scheme or that is no URL, from env or file`, () => {
      for (const value of bad) assertRefuses(() => load({ env: { [env]: value } }), env);
      assertRefuses(() => load({ cwd: withToml(toml) }), key);
      for (const value of good) assert.equal(load({ env: { [env]: value } })[key], value);
    });
  }

  it('refuses a default_plan that is not a plan id, and accepts free', () => {
    assertRefuses(() => load({ cwd: withToml('default_plan = "teams"') }), 'default_plan');
    assertRefuses(() => load({ env: { KEEPWATCH_DEFAULT_PLAN: 'Team' } }), 'KEEPWATCH_DEFAULT_PLAN');
    assert.equal(load({ cwd: withToml('default_plan = "free"') }).default_plan, 'free');
  });
});

/** Runs the real CLI; resolves with its exit code and output. */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += String(d); });
    child.stderr.on('data', (d) => { stderr += String(d); });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`CLI still running: ${stdout}${stderr}`)); }, 30_000);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

describe('config: boot', () => {
  it('keepwatch serve refuses an unknown env key before opening the store or listening', async () => {
    const dataDir = join(tempDir(), 'data');
    const { code, stderr } = await runCli(['serve'], {
      KEEPWATCH_DATA_DIR: dataDir, PORT: '0', KEEPWATCH_SECURITY__ALLOW_PRIVAT_TARGETS: 'true',
    });
    assert.notEqual(code, 0);
    assert.match(stderr, /KEEPWATCH_SECURITY__ALLOW_PRIVAT_TARGETS: unknown key/);
    assert.doesNotMatch(stderr, /keepwatch is serving/);
    assert.equal(existsSync(dataDir), false, 'the store was not opened');
  });

  it('keepwatch serve --config refuses a quota below 1, naming it', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    writeFileSync(join(dir, 'bad.toml'), '[plans.team]\nmax_targets = 0\n');
    const { code, stderr } = await runCli(['serve', '--config', join(dir, 'bad.toml')], { KEEPWATCH_DATA_DIR: dataDir, PORT: '0' });
    assert.notEqual(code, 0);
    assert.match(stderr, /plans\.team\.max_targets: must be at least 1/);
    assert.deepEqual(readdirSync(dataDir), [], 'nothing was generated into data_dir');
  });

  it('keepwatch serve refuses a plain-HTTP GitLab base URL and a mail.smtp_url nodemailer cannot use in one line, before opening the store', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'gitlab.toml'), '[auth.gitlab]\nbase_url = "http://gitlab.example.com"\n');
    const runs: Array<{ args: string[]; env: Record<string, string>; line: string }> = [
      { args: ['serve', '--config', join(dir, 'gitlab.toml')], env: {}, line: 'config: auth.gitlab.base_url: expected an https origin such as https://gitlab.example.com (no path; plain HTTP is refused), got "http://gitlab.example.com"' },
      { args: ['serve'], env: { KEEPWATCH_MAIL__SMTP_URL: 'http://x' }, line: 'config: KEEPWATCH_MAIL__SMTP_URL: expected an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587, got a URL of scheme http' },
      { args: ['serve'], env: { KEEPWATCH_MAIL__SMTP_URL: 'notaurl' }, line: 'config: KEEPWATCH_MAIL__SMTP_URL: expected an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587, got something that is not a URL' },
    ];
    const dataDirs = runs.map(() => join(tempDir(), 'data'));
    const results = await Promise.all(runs.map(({ args, env }, i) => runCli(args, { KEEPWATCH_DATA_DIR: dataDirs[i]!, PORT: '0', ...env })));
    results.forEach(({ code, stdout, stderr }, i) => {
      assert.equal(code, 1, `${runs[i]!.line}: ${stdout}${stderr}`);
      assert.equal(stderr, `${runs[i]!.line}\n`);
      assert.equal(existsSync(dataDirs[i]!), false, 'the store was not opened');
    });
  });
});
