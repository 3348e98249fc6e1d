// `keepwatch serve` bounds the heap's growth between full collections unless its command line chose a bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEAP_GROWING_PERCENT, heapGrowthFlag, limitHeapGrowth } from '../src/heap-growth.js';

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
