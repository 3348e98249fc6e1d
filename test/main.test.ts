// The CLI entry: help for a command is answered before anything can refuse (config, store).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from './db/child-server.js';

const dir = mkdtempSync(join(tmpdir(), 'keepwatch-main-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('keepwatch <command> --help', () => {
  // Every one of these would stop a real run: an unknown key, an unreachable server, a missing config file.
  const dataDir = join(dir, 'data');
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, KEEPWATCH_DATA_DIR: dataDir,
    KEEPWATCH_SECURITY__ALLOW_PRIVAT_TARGETS: 'true', DATABASE_URL: 'postgres://127.0.0.1:1/x', KEEPWATCH_CONFIG: join(dir, 'missing.toml'),
  };

  it('prints the usage of serve and migrate to stdout and exits 0, reading no config and opening no store', async () => {
    const runs = ['serve', 'migrate'].flatMap((command) => ['--help', '-h'].map((flag) => [command, flag]));
    const results = await Promise.all(runs.map((args) => runCli(args, env)));
    results.forEach((res, i) => {
      const [command, flag] = runs[i]!;
      assert.equal(res.code, 0, `${command} ${flag}: ${res.stdout}${res.stderr}`);
      assert.match(res.stdout, new RegExp(`^usage: keepwatch ${command} \\[--config PATH\\]\\n`), `${command} ${flag}`);
      assert.equal(res.stderr, '', `${command} ${flag}`);
    });
    assert.equal(existsSync(dataDir), false, 'no store was opened');
  });

  it('prints the admin usage, and each admin command\'s, without reading the config', async () => {
    const runs = [['admin', '--help'], ['admin', '-h'], ['admin', 'list-agents', '--help'], ['admin', 'create-agent', '-h']];
    const results = await Promise.all(runs.map((args) => runCli(args, env)));
    results.forEach((res, i) => {
      const args = runs[i]!.join(' ');
      assert.equal(res.code, 0, `${args}: ${res.stdout}${res.stderr}`);
      assert.equal(res.stderr, '', args);
    });
    assert.match(results[0]!.stdout, /^keepwatch admin <command>/);
    assert.equal(results[0]!.stdout, results[1]!.stdout);
    assert.equal(results[2]!.stdout, 'usage: keepwatch admin list-agents\n');
    assert.equal(results[3]!.stdout, 'usage: keepwatch admin create-agent --region-id ID --name NAME\n');
    // A call to the server does need it: the missing config file stops it, named.
    const call = await runCli(['admin', 'list-agents'], env);
    assert.notEqual(call.code, 0);
    assert.match(call.stderr, /KEEPWATCH_CONFIG/);
    assert.equal(existsSync(dataDir), false, 'no store was opened');
  });

  it('refuses --config without a path, exit 2 with the usage, rather than falling back to ./keepwatch.toml', async () => {
    const runs: Array<[string[], RegExp]> = [
      [['serve', '--config'], /^usage: keepwatch serve /],
      [['migrate', '--config='], /^usage: keepwatch migrate /],
      [['serve', '--config', '--log-level'], /^usage: keepwatch serve /],
      [['admin', 'list-regions', '--config'], /^keepwatch admin <command> \[--config PATH\]/],
    ];
    // Without the refusal each of these would read KEEPWATCH_CONFIG (missing) and exit 1 naming it.
    const results = await Promise.all(runs.map(([args]) => runCli(args, env)));
    results.forEach((res, i) => {
      const [args, usage] = runs[i]!;
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
      const [line, next] = res.stderr.split('\n');
      assert.equal(line, '--config needs a path: --config PATH or --config=PATH', args.join(' '));
      assert.match(next!, usage, args.join(' '));
      assert.equal(res.stdout, '', args.join(' '));
    });
    assert.equal(existsSync(dataDir), false, 'no store was opened');
  });

  it('says which command is unknown on stderr, exit 2; no command prints the usage, exit 2', async () => {
    const [unknown, none, adminUnknown, adminNone] = await Promise.all([runCli(['bogus'], env), runCli([], env), runCli(['admin', 'bogus'], env), runCli(['admin'], env)]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^unknown command: bogus\nusage: keepwatch <command>/);
    assert.equal(none.code, 2);
    assert.match(none.stdout, /^usage: keepwatch <command>/);
    assert.equal(adminUnknown.code, 2, adminUnknown.stdout + adminUnknown.stderr);
    assert.match(adminUnknown.stderr, /^unknown command: bogus\nkeepwatch admin <command>/);
    assert.equal(adminUnknown.stdout, '');
    assert.equal(adminNone.code, 2, 'as `keepwatch` with no command');
    assert.match(adminNone.stdout, /^keepwatch admin <command>/);
    assert.equal(existsSync(dataDir), false, 'no store was opened');
  });

  it('answers -h like --help for the command list', async () => {
    const res = await runCli(['-h'], env);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /^usage: keepwatch <command>/);
  });
});
