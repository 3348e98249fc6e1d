// `keepwatch serve` bounds the heap's growth between full collections unless its command line chose a
// bound, and hands the C heap's free pages back to the OS every second.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEAP_GROWING_PERCENT, heapGrowthFlag, limitHeapGrowth, loadMemoryBinding, trimMallocPeriodically } from '../src/process-memory.js';

describe('heap growth', () => {
  it('sets the growth factor when the command line sets none', () => {
    assert.equal(heapGrowthFlag([]), `--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    assert.equal(heapGrowthFlag(['--import', 'tsx', '--max-old-space-size=512']), `--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it("leaves an operator's own flag alone, in any of V8's spellings", () => {
    for (const own of ['--heap-growing-percent=100', '--heap_growing_percent=5', '--heap-growing-percent', '--no-heap-growing-percent']) {
      assert.equal(heapGrowthFlag(['--enable-source-maps', own]), null, own);
    }
    assert.equal(heapGrowthFlag(['--heap-growing-percentile=5']), `--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it('is accepted by this V8 once the process runs', () => {
    assert.doesNotThrow(() => limitHeapGrowth([]));
  });
});

describe('C heap trim', () => {
  it('is built by npm ci and answers whether a trim gave memory back', async () => {
    const binding = loadMemoryBinding();
    assert.ok(binding, 'build/Release/keepwatch_memory.node');
    // Garbage freed to the C heap (Buffers over the pool size are malloc'd), then trimmed.
    for (let i = 0; i < 100; i++) Buffer.alloc(64 * 1024);
    assert.equal(typeof (await binding.trim()), 'boolean');
  });

  it('trims on its interval, one trim at a time, without keeping the process alive', async () => {
    let calls = 0;
    let settle = (): void => {};
    const timer = trimMallocPeriodically(5, { trim: () => { calls++; return new Promise((ok) => { settle = () => ok(true); }); } });
    assert.ok(timer);
    try {
      assert.equal(timer.hasRef(), false);
      await new Promise((ok) => setTimeout(ok, 40));
      assert.equal(calls, 1, 'a trim still running is not started again');
      settle();
      await new Promise((ok) => setTimeout(ok, 40));
      assert.ok(calls >= 2);
    } finally {
      clearInterval(timer);
    }
  });

  it('does nothing where the addon is missing', () => {
    assert.equal(loadMemoryBinding('../build/Release/no-such-addon.node'), null);
    assert.equal(trimMallocPeriodically(1_000, null), null);
  });
});
