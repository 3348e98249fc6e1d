// The one way results reach the store. Probe results are buffered and written in batches (a probe
// loop never waits on the store); a result that must exist when a request answers (a manual state
// set) is written in that request's transaction with `writeNow`. Rollups follow later
// (rollup-folder.ts); a batch only gives new monitor-regions their cursor.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import { BatchWriter } from '../shared/batch-writer.js';
import { RollupFolder } from './rollup-folder.js';
import { ensureCursors, pairKey, type Pair } from './rollup-store.js';
import { insertResults } from './store.js';
import type { CheckResultRecord, ResultSink } from './types.js';

/** What else a batch of results changes, in the transaction that inserts it (incidents). */
export type ResultFold = (tx: Executor, records: readonly CheckResultRecord[]) => Promise<void>;

/** Pairs known to have a cursor row, remembered; past this the set starts again. */
const CURSORED_MAX = 200_000;

export class ResultWriter implements ResultSink {
  private readonly batches: BatchWriter<CheckResultRecord>;
  readonly rollups: RollupFolder;
  /** Pairs this node knows have a cursor row (rows go only with their monitor). */
  private readonly cursored = new Set<string>();

  /** `folds` run in order; each locks its per-monitor rows in id order. */
  constructor(db: Db, log: Logger, private readonly folds: readonly ResultFold[] = []) {
    this.rollups = new RollupFolder(db, log);
    this.batches = new BatchWriter({
      name: 'check results', log, maxDelayMs: 250, maxBatch: 500, maxQueued: 100_000,
      write: async (rows) => {
        const { pairs, fresh } = await db.transaction((tx) => this.write(tx, rows));
        this.remember(fresh);
        this.rollups.mark(pairs);
      },
    });
  }

  /**
   * Inserts, gives new pairs their cursor row, runs the folds; returns the records' pairs and those
   * given a cursor row (cursored once this commits).
   */
  private async write(tx: Executor, records: readonly CheckResultRecord[]): Promise<{ pairs: Pair[]; fresh: Pair[] }> {
    await insertResults(tx, records);
    const byKey = pairsOf(records);
    const fresh = [...byKey].filter(([k]) => !this.cursored.has(k)).map(([, p]) => p);
    await ensureCursors(tx, fresh);
    for (const fold of this.folds) await fold(tx, records);
    return { pairs: [...byKey.values()], fresh };
  }

  private remember(pairs: readonly Pair[]): void {
    if (this.cursored.size + pairs.length > CURSORED_MAX) this.cursored.clear();
    for (const p of pairs) this.cursored.add(pairKey(p.targetId, p.region));
  }

  /** Results pushed and not yet committed. */
  get backlog(): number {
    return this.batches.backlog;
  }

  push(result: CheckResultRecord): void {
    this.batches.push(result);
  }

  /** Writes `results` through `tx` (a transaction) now, so they commit with the change that caused them. */
  async writeNow(tx: Executor, ...results: CheckResultRecord[]): Promise<void> {
    if (!results.length) return;
    const { pairs } = await this.write(tx, results);
    // Not remembered as cursored: the caller's transaction may yet roll back.
    this.rollups.mark(pairs);
  }

  /** Resolves when every result pushed so far is written and folded into the rollups. */
  async flush(): Promise<void> {
    await this.batches.flush();
    await this.rollups.flush();
  }
}

function pairsOf(records: readonly CheckResultRecord[]): Map<string, Pair> {
  const pairs = new Map<string, Pair>();
  for (const r of records) {
    const k = pairKey(r.targetId, r.region);
    if (!pairs.has(k)) pairs.set(k, { targetId: r.targetId, region: r.region });
  }
  return pairs;
}
