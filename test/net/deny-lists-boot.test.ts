// Deny-lists load at boot from the configured files; a bad line refuses the boot naming the key.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { AppError } from '../../src/shared/errors.js';
import { createServices } from '../../src/services.js';
import { createTestStore, type TestStore } from '../helpers/store.js';

describe('deny-lists at boot (service-api.md, Limits 9)', () => {
  let store: TestStore;
  let dir: string;
  before(async () => {
    store = await createTestStore();
    dir = mkdtempSync(join(tmpdir(), 'keepwatch-deny-'));
  });
  after(async () => {
    await store.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const boot = (overrides: Record<string, string>) => createServices(
    loadConfig({ env: {}, cwd: dir, overrides: { data_dir: dir, 'metrics.enabled': false, 'auth.fingerprint_salt': 's', ...overrides } }),
    { db: store.db, log: pino({ level: 'silent' }) });

  it('loads both files and the services refuse what they list', async () => {
    writeFileSync(join(dir, 'paths.txt'), '# recon paths\n/.env\n/wp-admin\n');
    writeFileSync(join(dir, 'domains.txt'), 'evil.example\n');
    const services = await boot({ 'abuse.url_patterns_file': join(dir, 'paths.txt'), 'abuse.domain_denylist_file': join(dir, 'domains.txt') });
    try {
      const lists = services.denyLists.current;
      assert.throws(() => lists.checkUrl('https://ok.example/.env', 'check.url'), (e: unknown) => e instanceof AppError && e.code === 'URL_PATTERN_BLOCKED' && e.extra.field === 'check.url');
      assert.throws(() => lists.checkDomain('a.evil.example', 'check.host'), (e: unknown) => e instanceof AppError && e.code === 'DOMAIN_DENYLISTED');
      lists.checkUrl('https://ok.example/status', 'check.url');
    } finally {
      await services.close();
    }
  });

  it('a bad line refuses the boot naming the key and the line', async () => {
    writeFileSync(join(dir, 'bad-domains.txt'), 'fine.example\n*.wild.example\n');
    await assert.rejects(boot({ 'abuse.domain_denylist_file': join(dir, 'bad-domains.txt') }),
      (e: unknown) => e instanceof ConfigError && e.key === 'abuse.domain_denylist_file' && /bad-domains\.txt:2/.test(e.message));
    writeFileSync(join(dir, 'bad-paths.txt'), 'no-leading-slash\n');
    await assert.rejects(boot({ 'abuse.url_patterns_file': join(dir, 'bad-paths.txt') }),
      (e: unknown) => e instanceof ConfigError && e.key === 'abuse.url_patterns_file');
  });
});
