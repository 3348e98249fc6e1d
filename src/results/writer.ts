// The one way results reach the store. Probe results are buffered and written in batches (a probe
// loop never waits on the store); a result that must exist when a request answers (a manual state
// set) is written in that request's transaction with `writeNow`.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import { BatchWriter } from '../shared/batch-writer.js';
import { insertResults } from './store.js';
import type { CheckResultRecord, ResultSink } from './types.js';

export class ResultWriter implements ResultSink {
  private readonly batches: BatchWriter<CheckResultRecord>;

  constructor(db: Db, log: Logger) {
    this.batches = new BatchWriter({
      name: 'check results', log, maxDelayMs: 250, maxBatch: 500, maxQueued: 100_000,
      write: (rows) => db.transaction((tx) => insertResults(tx, rows)),
    });
  }

  push(result: CheckResultRecord): void {
    this.batches.push(result);
  }

  /** Writes `result` through `tx` (a transaction) now, so it commits with the change that caused it. */
  writeNow(tx: Executor, result: CheckResultRecord): Promise<void> {
    return insertResults(tx, [result]);
  }

  /** Resolves when every result pushed so far is written. */
  flush(): Promise<void> {
    return this.batches.flush();
  }
}
