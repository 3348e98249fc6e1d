// How far V8 lets the heap grow between full collections. By default it lets the old generation
// reach up to about four times what survived the last one; under the engine's steady stream of
// short-lived objects (a check, a ping, a batch) that headroom fills with garbage: at 10,000
// monitors the heap held 230 MB for 53 MB live (bench:checks). A factor of 1.3 kept it at 110-130
// MB, with the CPU a check within the host's noise (bench/README.md). V8 reads the flag at each
// collection, so setting it once the process runs takes effect.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 30;

/** The flag to set, or null when the process was started with its own (`node --heap-growing-percent=N`). */
export function heapGrowthFlag(execArgv: readonly string[]): string | null {
  const own = execArgv.some((arg) => /^--(no-)?heap[-_]growing[-_]percent\b/.test(arg));
  return own ? null : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Applies the growth limit to this process, unless its command line chose one. */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowthFlag(execArgv);
  if (flag) setFlagsFromString(flag);
}
