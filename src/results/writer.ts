// The one way results reach the store. Probe results are buffered and written in batches (a probe
// loop never waits on the store); a result that must exist when a request answers (a manual state
// set) is written in that request's transaction with `writeNow`.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import { BatchWriter } from '../shared/batch-writer.js';
import { foldIntoRollups } from './rollup-store.js';
import { insertResults } from './store.js';
import type { CheckResultRecord, ResultSink } from './types.js';

/** What else a batch of results changes, in the transaction that inserts it (rollups, incidents). */
export type ResultFold = (tx: Executor, records: readonly CheckResultRecord[]) => Promise<void>;

export class ResultWriter implements ResultSink {
  private readonly batches: BatchWriter<CheckResultRecord>;
  private readonly folds: readonly ResultFold[];

  /** `folds` run after the rollups, in order; each locks its per-monitor rows in id order. */
  constructor(db: Db, log: Logger, folds: readonly ResultFold[] = []) {
    this.folds = [foldIntoRollups, ...folds];
    this.batches = new BatchWriter({
      name: 'check results', log, maxDelayMs: 250, maxBatch: 500, maxQueued: 100_000,
      write: (rows) => db.transaction((tx) => this.write(tx, rows)),
    });
  }

  private async write(tx: Executor, records: readonly CheckResultRecord[]): Promise<void> {
    await insertResults(tx, records);
    for (const fold of this.folds) await fold(tx, records);
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
    if (results.length) await this.write(tx, results);
  }

  /** Resolves when every result pushed so far is written. */
  flush(): Promise<void> {
    return this.batches.flush();
  }
}
