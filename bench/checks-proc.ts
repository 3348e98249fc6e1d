// What bench/checks.ts reads of other processes from /proc (Linux): CPU time (the whole process:
// every thread, GC and libuv's pool included, as process.cpuUsage() would count it inside), RSS and
// its high-water mark, and the machine's busy time, to show how contended a run was.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** User + system CPU time of `pid` so far, in ms (resolution 1000 / CLK_TCK, 10 ms here); null once it is gone. */
export function cpuMsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

/** CPU time of this process's children that have exited and been reaped (cutime + cstime), in ms. */
export function reapedChildrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

/** Resident set now and at its highest so far (VmHWM), in MB; null once the process is gone. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** The machine's CPU time so far, busy and in all, in ms. */
export function machineCpuMs(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3]! + ticks[4]!;
  return { busy: ((total - idle) * 1000) / CLK_TCK, total: (total * 1000) / CLK_TCK };
}

/** Every second: each watched process's RSS, kept with the time it was read. */
export class RssSampler {
  readonly samples = new Map<number, Array<{ at: number; rssMb: number }>>();
  private readonly timer: NodeJS.Timeout;

  constructor(pids: number[]) {
    for (const pid of pids) this.samples.set(pid, []);
    this.timer = setInterval(() => this.sample(), 1000);
    this.sample();
  }

  watch(pid: number): void {
    if (!this.samples.has(pid)) this.samples.set(pid, []);
  }

  private sample(): void {
    const at = Date.now();
    for (const [pid, list] of this.samples) {
      const mem = memoryOf(pid);
      if (mem) list.push({ at, rssMb: mem.rssMb });
    }
  }

  /** RSS samples of `pid` within [from, to]. */
  between(pid: number, from: number, to: number): number[] {
    return (this.samples.get(pid) ?? []).filter((s) => s.at >= from && s.at <= to).map((s) => s.rssMb);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
