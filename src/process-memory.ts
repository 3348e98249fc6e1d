// How a long-running node holds its memory: V8's heap kept near what is live, a small young
// generation, WebAssembly compiled on one background task, and the C heap's free pages handed back
// to the OS. `keepwatch serve` applies them at start (`tuneProcessMemory`; the young generation's
// size on node's command line), as do the benches' stand-ins for it.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

// How far V8 lets the heap grow between full collections. By default it lets the old generation
// reach up to about four times what survived the last one; under the engine's steady stream of
// short-lived objects (a check, a ping, a batch) that headroom fills with garbage: at 10,000
// monitors the heap held 230 MB for 53 MB live (bench:checks). A factor of 1.3 kept it at 110-130
// MB, with the CPU a check within the host's noise (bench/README.md). V8 reads the flag at each
// collection, so setting it once the process runs takes effect.
export const HEAP_GROWING_PERCENT = 30;

// How many background tasks compile WebAssembly. V8 compiles the embedded store's module (9 MB)
// once quickly, then its hot functions again, optimised, in the background, by default on many
// tasks at once, each with compilation memory of its own. For a few seconds after start that is
// the highest RSS of a node with few monitors: an idle `keepwatch serve` on PGlite peaked at
// 298-317 MB, and at 277-281 MB with one task, which compiles the same functions one after
// another; the store opened no slower. Read when a compilation starts: set before the store opens.
export const WASM_COMPILATION_TASKS = 1;

// How large V8's young generation may grow, per semi-space: 16 MB by default on 64-bit, so up to
// 32 MB of RSS for objects that mostly die young. 4 MB: a PGlite node at 10,000 monitors held 254
// MB steady and peaked at 283, against 287 and 326-328 by default, at the same CPU a check within
// the host's noise (and the same CPU a ping in bench:pings). V8 sizes its heap when the process
// starts, so this one cannot be set from inside: `npm start` and `bin/keepwatch.js` put it on
// node's command line (a test holds them to this list), as the benches do for their stand-ins.
export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

const TUNED_FLAGS: Readonly<Record<string, number>> = {
  'heap-growing-percent': HEAP_GROWING_PERCENT,
  'wasm-num-compilation-tasks': WASM_COMPILATION_TASKS,
};

/** The V8 flags to set: each tuned one the process was not started with (`node --heap-growing-percent=N`, any spelling). */
export function v8FlagsToSet(execArgv: readonly string[]): string[] {
  return Object.entries(TUNED_FLAGS)
    .filter(([name]) => {
      const own = new RegExp(`^--(no-)?${name.replaceAll('-', '[-_]')}(=|$)`);
      return !execArgv.some((arg) => own.test(arg));
    })
    .map(([name, value]) => `--${name}=${value}`);
}

/** Sets the tuned V8 flags on this process, except those its command line chose. */
export function setV8Flags(execArgv: readonly string[] = process.execArgv): void {
  for (const flag of v8FlagsToSet(execArgv)) setFlagsFromString(flag);
}

// A long-running node hands the C heap's free pages back to the OS every second
// (native/memory/trim.cc, glibc's malloc_trim on a libuv worker). V8's helper threads and Node
// allocate and free through malloc all the time, and glibc keeps what they free mapped in their
// arenas: at 10,000 monitors that was 60 MB of a PGlite node's RSS, gone after one trim and back
// within seconds, so the trim runs every second (bench:checks: steady RSS 322-330 MB -> 273-292 MB,
// CPU a check unchanged). The addon is loaded once, on start; where it is missing, nothing is trimmed.
interface MemoryBinding { trim(): Promise<boolean> }

const ADDON_PATH = '../build/Release/keepwatch_memory.node';
export const MALLOC_TRIM_INTERVAL_MS = 1_000;

/** The addon at `path` (relative to this file), or null when it is not built. */
export function loadMemoryBinding(path: string = ADDON_PATH): MemoryBinding | null {
  try {
    return createRequire(import.meta.url)(path) as MemoryBinding;
  } catch {
    return null;
  }
}

/**
 * Trims every `intervalMs` (one trim at a time) without keeping the process alive. Returns the
 * timer, or null when there is no addon to trim with.
 */
export function trimMallocPeriodically(intervalMs = MALLOC_TRIM_INTERVAL_MS, binding = loadMemoryBinding()): NodeJS.Timeout | null {
  if (!binding) return null;
  let trimming = false;
  const timer = setInterval(() => {
    if (trimming) return;
    trimming = true;
    binding.trim().catch(() => false).finally(() => { trimming = false; });
  }, intervalMs);
  return timer.unref();
}

/** All three, as `keepwatch serve` runs them, before the store opens. */
export function tuneProcessMemory(): void {
  setV8Flags();
  trimMallocPeriodically();
}
