import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/db/data-dir-lock.js';
import { openPglite } from '../../src/db/db.js';
import { pgliteTemplateDir } from '../helpers/store.js';

describe('embedded store: one process per data dir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keepwatch-lock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a second open of a locked data dir is refused; closing releases it', async () => {
    cpSync(await pgliteTemplateDir(), join(dir, 'pg'), { recursive: true }); // an existing store: initdb costs seconds
    const db = await openPglite({ dataDir: join(dir, 'pg') });
    try {
      await assert.rejects(openPglite({ dataDir: join(dir, 'pg') }), DataDirLockedError);
    } finally {
      await db.close();
    }
    assert.equal(existsSync(join(dir, 'pg', LOCK_FILE)), false);
    const again = await openPglite({ dataDir: join(dir, 'pg') });
    assert.equal((await again.query<{ n: number }>('SELECT 1 AS n'))[0]!.n, 1);
    await again.close();
  });

  it('the store is the owner\'s alone: its directories 0700 and its files 0600, however they were left', async () => {
    const store = join(dir, 'modes');
    cpSync(await pgliteTemplateDir(), store, { recursive: true });
    // As PGlite's initdb leaves them: it knows no umask.
    chmodSync(store, 0o755);
    chmodSync(join(store, 'PG_VERSION'), 0o666);
    chmodSync(join(store, 'global'), 0o777);
    const db = await openPglite({ dataDir: store });
    try {
      const loose: string[] = [];
      const walk = (path: string): void => {
        const mode = statSync(path).mode & 0o777;
        if (statSync(path).isDirectory()) {
          if (mode !== 0o700) loose.push(`${path} ${mode.toString(8)}`);
          for (const name of readdirSync(path)) walk(join(path, name));
        } else if (mode !== 0o600) loose.push(`${path} ${mode.toString(8)}`);
      };
      walk(store);
      assert.deepEqual(loose, []);
    } finally {
      await db.close();
    }
  });

  it('a lock held by a live process refuses; one left by a dead process is taken over', async () => {
    const other = join(dir, 'other');
    rmSync(other, { recursive: true, force: true });
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await import('node:fs').then((fs) => fs.mkdirSync(other, { recursive: true }));
      writeFileSync(join(other, LOCK_FILE), `${child.pid}\n`);
      assert.throws(() => lockDataDir(other), (e: unknown) => e instanceof DataDirLockedError && e.pid === child.pid);
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    const release = lockDataDir(other);
    release();
    assert.equal(existsSync(join(other, LOCK_FILE)), false);
  });
});
