// The shared deadline of every probe: it settles on time, reports the outer abort, and leaves no
// listener behind on the outer signal (the scheduler shares one signal across every check).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { CheckTimeoutError, Deadline, withDeadline } from '../../src/probes/outcome.js';
import type { ProbeResult } from '../../src/probes/types.js';

const up: ProbeResult = { status: 'up', duration_ms: 1, error: null };
const asError = (err: unknown): ProbeResult => ({ status: 'error', duration_ms: 0, error: (err as Error).message });

describe('withDeadline', () => {
  it('removes its listener from the outer signal after every check', async () => {
    const outer = new AbortController();
    for (let i = 0; i < 1000; i++) await withDeadline(1000, outer.signal, async () => up, asError);
    await withDeadline(1000, outer.signal, async () => { throw new Error('boom'); }, asError);
    assert.equal(getEventListeners(outer.signal, 'abort').length, 0);
  });

  it('settles at the deadline even when the run ignores its signal, and reports an outer abort', async () => {
    const late = await withDeadline(50, undefined, () => new Promise<ProbeResult>(() => {}), (err) => ({ ...asError(err), error: String(err instanceof CheckTimeoutError) }));
    assert.equal(late.error, 'true');
    const outer = new AbortController();
    const running = withDeadline(5000, outer.signal, () => new Promise<ProbeResult>(() => {}), asError);
    outer.abort();
    assert.equal((await running).error, 'check aborted');
  });

  it('hands the run its deadline: aborted at the timeout, with the reason on its listeners and its signal', async () => {
    let seen: Deadline | undefined;
    const heard: unknown[] = [];
    await withDeadline(30, undefined, (deadline) => {
      seen = deadline;
      deadline.onAbort((reason) => heard.push(reason));
      return new Promise<ProbeResult>(() => {});
    }, asError);
    assert.ok(seen!.aborted);
    assert.ok(seen!.reason instanceof CheckTimeoutError);
    assert.deepEqual(heard, [seen!.reason]);
    // A signal asked for after the abort is born aborted, with the same reason.
    assert.equal(seen!.signal.aborted, true);
    assert.equal(seen!.signal.reason, seen!.reason);
    assert.throws(() => seen!.throwIfAborted(), CheckTimeoutError);
  });
});

describe('Deadline', () => {
  it('calls each listener once, not after it is taken back, and at once when already aborted', () => {
    const deadline = new Deadline();
    const calls: string[] = [];
    const signal = deadline.signal;
    deadline.onAbort(() => calls.push('kept'));
    const takeBack = deadline.onAbort(() => calls.push('taken back'));
    takeBack();
    deadline.abort('first');
    deadline.abort('second');
    assert.deepEqual(calls, ['kept']);
    assert.equal(deadline.reason, 'first');
    assert.deepEqual([signal.aborted, signal.reason], [true, 'first'], 'a signal made before the abort follows it');
    deadline.onAbort((reason) => calls.push(`late ${String(reason)}`));
    assert.deepEqual(calls, ['kept', 'late first']);
  });
});

