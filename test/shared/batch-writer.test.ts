import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pino from 'pino';
import { BatchWriter, valuesList, type BatchWriterOptions } from '../../src/shared/batch-writer.js';

/** A writer recording each batch it writes, and the log lines it emits. */
function recorder(options: Partial<BatchWriterOptions<number>> = {}) {
  const batches: number[][] = [];
  const logs: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const writer = new BatchWriter<number>({
    name: 'test_rows', log,
    write: async (rows) => { batches.push(rows); },
    ...options,
  });
  return { writer, batches, logs };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}

describe('BatchWriter', () => {
  it('writes buffered rows in one batch once the delay has passed', async () => {
    const { writer, batches } = recorder({ maxDelayMs: 30 });
    writer.push(1);
    writer.push(2);
    await sleep(5);
    assert.deepEqual(batches, [], 'nothing is written before the delay');
    await sleep(80);
    assert.deepEqual(batches, [[1, 2]]);
    writer.push(3);
    await sleep(80);
    assert.deepEqual(batches, [[1, 2], [3]], 'a later row starts a new delay');
  });

  it('writes at once when maxBatch rows are buffered', async () => {
    const { writer, batches } = recorder({ maxDelayMs: 60_000, maxBatch: 3 });
    writer.push(1);
    writer.push(2);
    await sleep(5);
    assert.deepEqual(batches, []);
    writer.push(3);
    await sleep(5);
    assert.deepEqual(batches, [[1, 2, 3]]);
    writer.push(4);
    await sleep(5);
    assert.deepEqual(batches, [[1, 2, 3]], 'the next row waits for its delay again');
    await writer.flush();
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
  });

  it('flush() resolves only once every earlier row is written', async () => {
    const gates = [deferred(), deferred()];
    const written: number[][] = [];
    let call = 0;
    const writer = new BatchWriter<number>({
      name: 'slow_rows', log: pino({ level: 'silent' }), maxBatch: 2, maxDelayMs: 60_000,
      write: async (rows) => { await gates[call++]!.promise; written.push(rows); },
    });
    writer.push(1);
    writer.push(2); // a full batch: its write starts and blocks on the first gate
    writer.push(3);
    let flushed = false;
    const flushing = writer.flush().then(() => { flushed = true; });
    await sleep(10);
    assert.equal(flushed, false, 'the first batch is still being written');
    gates[0]!.resolve();
    await sleep(10);
    assert.deepEqual(written, [[1, 2]]);
    assert.equal(flushed, false, 'row 3 is still being written');
    gates[1]!.resolve();
    await flushing;
    assert.deepEqual(written, [[1, 2], [3]]);
  });

  it('a failing write is logged, never rejects push or flush, and later rows still go out', async () => {
    let fail = true;
    const batches: number[][] = [];
    const logs: Record<string, unknown>[] = [];
    const writer = new BatchWriter<number>({
      name: 'flaky_rows', log: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) }),
      maxDelayMs: 10,
      write: async (rows) => {
        if (fail) throw new Error('store unavailable');
        batches.push(rows);
      },
    });
    assert.doesNotThrow(() => writer.push(1));
    await writer.flush();
    assert.equal(logs.length, 1);
    assert.equal(logs[0]!.msg, 'flaky_rows: write failed');
    assert.equal(logs[0]!.rows, 1);
    assert.match(JSON.stringify(logs[0]!.err), /store unavailable/);
    fail = false;
    writer.push(2);
    await sleep(40);
    assert.deepEqual(batches, [[2]]);
  });

  it('drops rows beyond maxQueued while the store stalls, and says so', async () => {
    const gate = deferred();
    const written: number[][] = [];
    const logs: Record<string, unknown>[] = [];
    const writer = new BatchWriter<number>({
      name: 'stalled_rows', log: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) }),
      maxBatch: 2, maxQueued: 4, maxDelayMs: 60_000,
      write: async (rows) => { await gate.promise; written.push(rows); },
    });
    for (let i = 1; i <= 7; i++) writer.push(i);
    const flushing = writer.flush();
    gate.resolve();
    await flushing;
    assert.deepEqual(written, [[1, 2], [3, 4]]);
    assert.deepEqual(logs.map((l) => [l.msg, l.dropped]), [['stalled_rows: rows dropped, the store is not keeping up', 3]]);
    writer.push(8);
    await writer.flush();
    assert.deepEqual(written.at(-1), [8], 'room again once the writes finished');
  });

  it('valuesList numbers the parameters row by row', () => {
    assert.equal(valuesList(2, 3), '($1, $2, $3), ($4, $5, $6)');
    assert.equal(valuesList(1, 1), '($1)');
  });
});
