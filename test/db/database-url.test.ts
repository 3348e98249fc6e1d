// A DATABASE_URL that names no usable server stops the CLI with one line naming it, never the password.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CONNECT_TIMEOUT_SECS } from '../../src/db/database-url.js';
import { usePostgres } from '../helpers/store.js';
import { runCli } from './child-server.js';

const dir = mkdtempSync(join(tmpdir(), 'keepwatch-database-url-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let runs = 0;

describe('keepwatch serve and migrate on a DATABASE_URL that names no usable server', () => {
  /** Runs `serve` and `migrate` on `url`; each must stop with exactly one line on stderr, exit 1, and no store opened. */
  const refusals = async (url: string, setBy: Record<string, string> = { DATABASE_URL: url }): Promise<string[]> => {
    const dataDir = join(dir, `data-${++runs}`);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, KEEPWATCH_DATA_DIR: dataDir, PORT: '0', KEEPWATCH_METRICS__ENABLED: 'false', ...setBy };
    const lines: string[] = [];
    for (const res of await Promise.all([runCli(['serve'], env), runCli(['migrate'], env)])) {
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assert.match(res.stderr, /^[^\n]+\n$/, `one line, no stack: ${res.stderr}`);
      assert.doesNotMatch(res.stdout, /keepwatch is serving/);
      lines.push(res.stderr.trimEnd());
    }
    assert.equal(existsSync(dataDir), false, 'nothing was written to data_dir');
    return lines;
  };

  it('names it and says the connection was refused, without the password', async () => {
    for (const line of await refusals('postgres://kw:hunter2@127.0.0.1:1/x')) {
      assert.equal(line, 'DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:1: connection refused (ECONNREFUSED)');
    }
  });

  it('names where the URL was set: the KEEPWATCH_ variable, or the config file and key', async () => {
    const url = 'postgres://kw:hunter2@127.0.0.1:1/x';
    for (const line of await refusals(url, { KEEPWATCH_DATABASE_URL: url })) {
      assert.equal(line, 'KEEPWATCH_DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:1: connection refused (ECONNREFUSED)');
    }
    const file = join(dir, 'keepwatch.toml');
    writeFileSync(file, `database_url = "${url}"\n`);
    for (const line of await refusals(url, { KEEPWATCH_CONFIG: file })) {
      assert.equal(line, `database_url in ${file}: cannot connect to PostgreSQL at 127.0.0.1:1: connection refused (ECONNREFUSED)`);
    }
  });

  it('names it and says it is malformed, before connecting anywhere', async () => {
    for (const line of await refusals('notaurl')) assert.match(line, /^DATABASE_URL: not a URL; expected postgres:\/\//);
    for (const line of await refusals('mysql://kw:hunter2@127.0.0.1/x')) assert.equal(line, 'DATABASE_URL: expected a postgres:// URL, not mysql://');
  });

  it('gives up on a server that never answers after connect_timeout (10 s unless the URL sets it), and refuses a bad one', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      // The processes' own start, timed on a refusal that is immediate: on a loaded machine it is seconds.
      let started = Date.now();
      await refusals('postgres://kw:hunter2@127.0.0.1:1/x');
      const startup = Date.now() - started;
      started = Date.now();
      for (const line of await refusals(`postgres://kw:hunter2@127.0.0.1:${port}/x?connect_timeout=1`)) {
        assert.equal(line, `DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:${port}: no answer within 1 s (connect_timeout)`);
      }
      const waited = Date.now() - started - startup;
      assert.ok(waited < (CONNECT_TIMEOUT_SECS - 4) * 1000, `the URL's connect_timeout, not the default: waited ${waited} ms beyond the start`);
    } finally {
      silent.close();
    }
    for (const line of await refusals('postgres://kw:hunter2@127.0.0.1:1/x?connect_timeout=soon')) {
      assert.equal(line, 'DATABASE_URL: connect_timeout: expected whole seconds from 1 to 99999, got "soon"');
    }
  });

  it('passes on what the server refuses (a missing database, wrong credentials), without the password', { skip: !usePostgres && 'needs DATABASE_URL' }, async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/kw_missing_${process.pid}`;
    url.password ||= 'hunter2';
    for (const line of await refusals(url.href)) {
      assert.match(line, /^DATABASE_URL: cannot connect to PostgreSQL at [^ ]+:\d+: .+ \((3D000|28P01)\)$/);
      assert.ok(!line.includes(url.password), line);
    }
  });
});
