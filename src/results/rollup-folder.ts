// Folds results into the hourly rollups a while after they are written, not in their transaction.
// A monitor checked every 10 s then costs one rollup upsert and one cursor update a minute instead of
// six of each, and a results batch takes no cursor locks. Nothing waits on the fold: readers add the
// results after each cursor themselves (rollup-store.ts `readUnfolded`), so figures are the same
// before and after it; the history sweep removes only folded results.
//
// The folder keeps the pairs (monitor-region) this node wrote, in the order they first became
// dirty, and folds those dirty for FOLD_AFTER_MS, a chunk per transaction. What it folds is read
// from the store (everything after the cursor), not from memory, so results another node wrote,
// or a node that stopped before folding left, are folded with the pair's next fold; at start the
// folder also takes every pair with results after its cursor. A result committed after a later one
// of its pair was folded (two overlapping checks of one monitor, a fold between their writes) is
// after no cursor: it stays in the raw history, in no rollup.
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { foldPairs, pairKey, pairsWithUnfolded, type Pair } from './rollup-store.js';

/** How long a pair's results wait before they are folded (at most about this plus TICK_MS). */
export const FOLD_AFTER_MS = 60_000;
const TICK_MS = 1_000;
/** Pairs folded in one transaction: small, as the embedded store holds the event loop for each statement. */
const CHUNK = 100;

export class RollupFolder {
  /** Dirty pairs by key, oldest first, with when each became dirty (performance.now()). */
  private readonly dirty = new Map<string, Pair & { since: number }>();
  private running: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db, private readonly log: Logger, private readonly foldAfterMs = FOLD_AFTER_MS) {}

  /** Marks pairs as having results to fold (once written: a pair folded before its results commit waits for its next write). */
  mark(pairs: Iterable<Pair>): void {
    const now = performance.now();
    for (const p of pairs) {
      const k = pairKey(p.targetId, p.region);
      if (!this.dirty.has(k)) this.dirty.set(k, { targetId: p.targetId, region: p.region, since: now });
    }
  }

  /** Starts folding on a timer, after taking what an earlier run left unfolded. */
  start(): void {
    this.running = this.running.then(async () => {
      try {
        this.mark(await pairsWithUnfolded(this.db));
      } catch (err) {
        this.log.error({ err }, 'reading unfolded results failed; their pairs fold with their next results');
      }
    });
    // Each tick folds at most the share of the dirty pairs that keeps pace with FOLD_AFTER_MS: pairs
    // that all became dirty at once (a start, a burst) are folded over a minute, not in one second.
    // A tick finds the one before it done, or skips: a slow store does not pile up ticks.
    let ticking = false;
    this.timer ??= setInterval(() => {
      if (ticking) return;
      ticking = true;
      const pace = Math.max(CHUNK, Math.ceil((this.dirty.size * TICK_MS) / this.foldAfterMs));
      void this.fold(performance.now() - this.foldAfterMs, pace).finally(() => { ticking = false; });
    }, TICK_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Folds every dirty pair now; resolves when done. */
  flush(): Promise<void> {
    return this.fold(Infinity, Infinity);
  }

  /** Folds up to `most` of the pairs dirty since before `dirtyBefore`, one fold at a time. */
  private fold(dirtyBefore: number, most: number): Promise<void> {
    this.running = this.running.then(async () => {
      for (let left = most; left > 0;) {
        const chunk: Pair[] = [];
        for (const [k, p] of this.dirty) {
          if (p.since > dirtyBefore || chunk.length >= Math.min(CHUNK, left)) break;
          chunk.push(p);
          this.dirty.delete(k);
        }
        if (!chunk.length) return;
        left -= chunk.length;
        // A turn of the event loop between chunks: the embedded store's statements resolve without
        // one, and a backlog of chunks would hold timers (the scheduler's) for all of them.
        await new Promise((resolve) => setImmediate(resolve));
        try {
          await this.db.transaction((tx) => foldPairs(tx, chunk));
        } catch (err) {
          // Their results stay after their cursors, where readers count them; tried again in FOLD_AFTER_MS.
          this.log.error({ err, pairs: chunk.length }, 'folding results into rollups failed');
          this.mark(chunk);
          return;
        }
      }
    });
    return this.running;
  }
}
