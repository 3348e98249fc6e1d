import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { DenyListHolder, installSighupReload } from '../../src/net/deny-lists.js';

const dir = mkdtempSync(join(tmpdir(), 'keepwatch-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function setup(name: string): { holder: DenyListHolder; patterns: string; domains: string } {
  const patterns = join(dir, `${name}-patterns.txt`);
  const domains = join(dir, `${name}-domains.txt`);
  writeFileSync(patterns, '/.env\n');
  writeFileSync(domains, 'evil.example\n');
  return { holder: new DenyListHolder({ urlPatterns: patterns, domains }), patterns, domains };
}

function blocks(holder: DenyListHolder, url: string): boolean {
  try {
    holder.current.checkUrl(url, 'check.url');
    return false;
  } catch {
    return true;
  }
}

/** A real pino logger writing into an array. */
function memoryLog(): { log: pino.Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({}, sink), lines };
}

/** Sends SIGHUP to this process and waits for its delivery (the timer keeps the loop alive). */
async function sendSighup(): Promise<void> {
  const delivered = once(process, 'SIGHUP');
  const timer = setTimeout(() => {}, 5000);
  try {
    process.kill(process.pid, 'SIGHUP');
    await delivered;
  } finally {
    clearTimeout(timer);
  }
}

describe('DenyListHolder.reload', () => {
  it('swaps in the edited rules', () => {
    const { holder, patterns } = setup('swap');
    const before = holder.current;
    writeFileSync(patterns, '/wp-admin\n');
    assert.equal(holder.reload(), true);
    assert.notEqual(holder.current, before);
    assert.equal(blocks(holder, 'https://a.test/wp-admin/x'), true);
    assert.equal(blocks(holder, 'https://a.test/.env'), false);
    assert.equal(holder.lastError, null);
  });

  it('keeps the old rules when an edit is bad, and says why', () => {
    const { holder, patterns, domains } = setup('bad');
    const before = holder.current;
    writeFileSync(patterns, '/wp-admin\n');
    writeFileSync(domains, 'fine.example\n*.broken\n');
    assert.equal(holder.reload(), false);
    assert.equal(holder.current, before);
    assert.equal(blocks(holder, 'https://a.test/.env'), true);
    assert.equal(blocks(holder, 'https://a.test/wp-admin'), false);
    assert.equal(blocks(holder, 'https://evil.example/'), true);
    assert.match(String(holder.lastError?.message), new RegExp(`^${domains}:2: `));
  });

  it('refuses to start on a bad file', () => {
    const patterns = join(dir, 'start-patterns.txt');
    writeFileSync(patterns, 'no-slash\n');
    assert.throws(() => new DenyListHolder({ urlPatterns: patterns }), new RegExp(`${patterns}:1: `));
  });
});

describe('installSighupReload', () => {
  it('a real SIGHUP swaps the rules, and a bad edit then keeps them', async () => {
    const { holder, patterns } = setup('sighup');
    const { log, lines } = memoryLog();
    const uninstall = installSighupReload(holder, log, { enabled: true });
    try {
      writeFileSync(patterns, '/wp-admin\n');
      await sendSighup();
      assert.equal(blocks(holder, 'https://a.test/wp-admin'), true);
      assert.equal(blocks(holder, 'https://a.test/.env'), false);
      assert.deepEqual(lines.map((l) => l.msg), ['deny-lists reloaded']);

      writeFileSync(patterns, 'wp-admin\n');
      await sendSighup();
      assert.equal(blocks(holder, 'https://a.test/wp-admin'), true);
      assert.equal(lines[1]?.msg, 'deny-list reload refused; the previous rules stay in force');
      assert.equal(lines[1]?.level, 50);
    } finally {
      uninstall();
    }
  });

  it('installs nothing when hot reload is disabled, and uninstalls cleanly', () => {
    const { holder } = setup('disabled');
    const { log } = memoryLog();
    const baseline = process.listenerCount('SIGHUP');
    installSighupReload(holder, log, { enabled: false })();
    assert.equal(process.listenerCount('SIGHUP'), baseline);
    const uninstall = installSighupReload(holder, log, { enabled: true });
    assert.equal(process.listenerCount('SIGHUP'), baseline + 1);
    uninstall();
    assert.equal(process.listenerCount('SIGHUP'), baseline);
  });
});
