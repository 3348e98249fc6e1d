// `keepwatch serve` bounds the heap's growth between full collections and compiles WebAssembly on
// one background task, unless its command line chose otherwise, starts node with a small young
// generation, and hands the C heap's free pages back to the OS every second.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  HEAP_GROWING_PERCENT, loadMemoryBinding, SERVE_NODE_FLAGS, setV8Flags, trimMallocPeriodically, v8FlagsToSet, WASM_COMPILATION_TASKS,
} from '../src/process-memory.js';

const HEAP = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
const WASM = `--wasm-num-compilation-tasks=${WASM_COMPILATION_TASKS}`;

describe('V8 flags', () => {
  it('sets each tuned flag the command line sets none of', () => {
    assert.deepEqual(v8FlagsToSet([]), [HEAP, WASM]);
    assert.deepEqual(v8FlagsToSet(['--import', 'tsx', '--max-old-space-size=512']), [HEAP, WASM]);
  });

  it("leaves an operator's own flag alone, in any of V8's spellings", () => {
    for (const own of ['--heap-growing-percent=100', '--heap_growing_percent=5', '--heap-growing-percent', '--no-heap-growing-percent']) {
      assert.deepEqual(v8FlagsToSet(['--enable-source-maps', own]), [WASM], own);
    }
    for (const own of ['--wasm-num-compilation-tasks=4', '--wasm_num_compilation_tasks=0']) {
      assert.deepEqual(v8FlagsToSet([own]), [HEAP], own);
    }
    assert.deepEqual(v8FlagsToSet(['--heap-growing-percentile=5']), [HEAP, WASM]);
  });

  it('are accepted by this V8 once the process runs', () => {
    assert.doesNotThrow(() => setV8Flags([]));
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

describe("node's own flags", () => {
  it('are on the command line of `npm start` and of bin/keepwatch.js, as the list says', () => {
    const root = new URL('../', import.meta.url);
    const start = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
    // `exec`: npm's shell gives way to node, so a supervisor's SIGTERM to `npm start` reaches the server.
    assert.equal(start, `exec node ${SERVE_NODE_FLAGS.join(' ')} dist/main.js serve`);
    const shebang = readFileSync(new URL('bin/keepwatch.js', root), 'utf8').split('\n', 1)[0];
    assert.equal(shebang, `#!/usr/bin/env -S node ${SERVE_NODE_FLAGS.join(' ')}`);
  });

  it('are accepted by this node', () => {
    const run = spawnSync(process.execPath, [...SERVE_NODE_FLAGS, '-e', `process.stdout.write(String(require('node:v8').getHeapStatistics().total_heap_size > 0))`], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'true');
  });
});
