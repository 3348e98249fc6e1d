// Buffers rows that must be recorded but must never hold up a response (login attempts,
// quota events) and writes them in one multi-row insert per flush.
import type { Logger } from 'pino';

export interface BatchWriterOptions<T> {
  name: string;
  write: (rows: T[]) => Promise<void>;
  log: Logger;
  /** Longest a row waits in memory. */
  maxDelayMs?: number;
  maxBatch?: number;
  /** Rows buffered or being written; beyond it (a store that stalls) new rows are dropped and counted. */
  maxQueued?: number;
}

export class BatchWriter<T> {
  private rows: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private queued = 0;
  private dropped = 0;

  constructor(private readonly options: BatchWriterOptions<T>) {}

  /** Rows buffered or being written. */
  get backlog(): number {
    return this.queued;
  }

  push(row: T): void {
    if (this.queued >= (this.options.maxQueued ?? 50_000)) this.dropped++;
    else {
      this.queued++;
      this.rows.push(row);
      if (this.rows.length >= (this.options.maxBatch ?? 500)) return void this.flush();
    }
    this.timer ??= setTimeout(() => void this.flush(), this.options.maxDelayMs ?? 100);
  }

  /** Writes what is buffered; resolves when every earlier row is written (or failed and logged). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.rows.splice(0);
    if (this.dropped) {
      this.options.log.error({ dropped: this.dropped }, `${this.options.name}: rows dropped, the store is not keeping up`);
      this.dropped = 0;
    }
    if (rows.length) {
      this.inFlight = this.inFlight
        .then(() => this.options.write(rows))
        .catch((err: unknown) => this.options.log.error({ err, rows: rows.length }, `${this.options.name}: write failed`))
        .finally(() => { this.queued -= rows.length; });
    }
    return this.inFlight;
  }
}

/** `($1, $2), ($3, $4)` for `rows` rows of `width` parameters. */
export function valuesList(rows: number, width: number): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    out.push(`(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(', ')})`);
  }
  return out.join(', ');
}
