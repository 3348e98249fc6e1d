// The shared deadline of every probe: it settles on time, reports the outer abort, and leaves no
// listener behind on the outer signal (the scheduler shares one signal across every check).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { CheckTimeoutError, withDeadline } from '../../src/probes/outcome.js';
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
});
