// The embedded store admits one process: two PGlite instances on one data dir corrupt it.
// A lock file holds the owner's pid; a lock left by a dead process (kill -9) is taken over.
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Refusal } from '../shared/refusal.js';

export const LOCK_FILE = 'keepwatch.lock';

export class DataDirLockedError extends Refusal {
  constructor(readonly dir: string, readonly pid: number) {
    super(`the data dir ${dir} is in use by process ${pid}; the embedded store admits one process (use the admin CLI against the running server)`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock or throws DataDirLockedError; returns the release function. */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => { try { unlinkSync(path); } catch { /* already gone */ } };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) throw new DataDirLockedError(dir, owner);
      unlinkSync(path);
    }
  }
  throw new DataDirLockedError(dir, -1);
}
