// `npm run bench:api`: requests/s and p99 of an authenticated GET /api/v1/regions on each store,
// against a bare node:http server answering the same JSON. See bench/README.md.
// Each server runs in a fresh process of its own; the load generator runs in another (bench/load.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { machineCpuMs, reapedChildrenCpuMs } from './checks-proc.js';
import { summariseProfile } from './checks-profile.js';
import { loadGenerator, runLoad, type LoadResult } from './load.js';
import { DEFAULT_PG_URL, postgresTarget } from './servers.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 10);
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3);
/** `bare,pglite,postgres` by default; a subset to look at one server. */
const ONLY = new Set((process.env.BENCH_ONLY ?? 'bare,pglite,postgres').split(','));
/**
 * Rounds over the servers, each round in the reverse order of the one before: whichever runs last
 * meets a warmer machine, and a fixed order charged that to one server. The figures are each
 * server's best round (the host's noise, invisible from inside this VM, only ever slows a run) and
 * the mean of its rounds; every round is printed as it ends.
 */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
/** A directory: each server process writes an inspector CPU profile of its measured window there, summarised on stdout. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF_DIR;
const SERVER_PROCESS = fileURLToPath(new URL('./server-process.ts', import.meta.url));

interface Measured extends LoadResult {
  /** CPU time of the server process per answered request: steadier than req/s on a busy machine. */
  cpuMicrosPerRequest: number;
  /**
   * Cores busy over the window with anything but the server, the load generator and this process:
   * a PostgreSQL server vacuuming, another session's tests. Above a few tenths, the run was contended.
   */
  othersCores: number;
}

interface Row { name: string; result: Measured }

type Reply =
  | { type: 'ready'; url: string; headers: Record<string, string> } | { type: 'cpu'; usage: NodeJS.CpuUsage }
  | { type: 'prof-started' } | { type: 'prof-stopped'; path: string } | { type: 'error'; message: string };

function nextMessage(child: ChildProcess): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`server process exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message: Reply) => {
      child.off('exit', onExit);
      if (message.type === 'error') reject(new Error(message.message));
      else resolve(message);
    });
  });
}

async function cpuOf(child: ChildProcess): Promise<NodeJS.CpuUsage> {
  child.send('cpu');
  const reply = await nextMessage(child);
  if (reply.type !== 'cpu') throw new Error(`expected cpu, got ${reply.type}`);
  return reply.usage;
}

/** Starts `kind` in its own process, warms it up, then measures it. */
async function benchServer(kind: 'bare' | 'keepwatch', databaseUrl?: string): Promise<Measured> {
  const child = fork(SERVER_PROCESS, [kind, databaseUrl ?? ''], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  child.stderr!.resume(); // Fastify deprecation notices and the like are not bench output.
  const label = kind === 'bare' ? kind : `${kind} (${databaseUrl ? 'PostgreSQL' : 'PGlite'})`;
  try {
    const ready = await nextMessage(child);
    if (ready.type !== 'ready') throw new Error(`expected ready, got ${ready.type}`);
    const load = { url: ready.url, headers: ready.headers, connections: CONNECTIONS };
    await runLoad({ ...load, durationSecs: WARMUP_SECS });
    if (PROFILE_DIR) {
      child.send('prof-start');
      await nextMessage(child);
    }
    const [machine0, reaped0, own0] = [machineCpuMs(), reapedChildrenCpuMs(), process.cpuUsage()];
    const before = await cpuOf(child);
    const result = await runLoad({ ...load, durationSecs: DURATION_SECS });
    const after = await cpuOf(child);
    const [machine1, reaped1, own] = [machineCpuMs(), reapedChildrenCpuMs(), process.cpuUsage(own0)];
    if (PROFILE_DIR) {
      child.send({ type: 'prof-stop', dir: PROFILE_DIR });
      const stopped = await nextMessage(child);
      if (stopped.type === 'prof-stopped') process.stdout.write(`\n${label}: ${stopped.path}\n${summariseProfile(stopped.path, 30)}\n`);
    }
    if (result.non2xx || result.errors) throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    const cpuMicros = after.user - before.user + after.system - before.system;
    // The load generator has exited by now: its CPU is in the reaped children's.
    const oursMs = cpuMicros / 1000 + (reaped1 - reaped0) + (own.user + own.system) / 1000;
    const othersCores = Math.max(0, machine1.busy - machine0.busy - oursMs) / (DURATION_SECS * 1000);
    const measured = { ...result, cpuMicrosPerRequest: cpuMicros / result.total, othersCores };
    process.stdout.write(`· ${label}: ${result.requestsPerSec.toFixed(0)} req/s, ${measured.cpuMicrosPerRequest.toFixed(0)} µs CPU a request, others ${othersCores.toFixed(2)} cores\n`);
    return measured;
  } finally {
    child.send('stop');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/**
 * `vs bare` is each row's throughput over the first row's (the bare server in a full run); `CPU vs bare`
 * the same from CPU time per request, which a machine busy with other work disturbs less.
 */
function printTable(rows: Row[]): void {
  const base = rows[0]!.result;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [['server', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'vs bare', 'CPU vs bare', 'others']];
  for (const { name, result } of rows) {
    lines.push([name, result.requestsPerSec.toFixed(0), String(result.p50Ms), String(result.p99Ms), result.cpuMicrosPerRequest.toFixed(0),
      pct(result.requestsPerSec / base.requestsPerSec), pct(base.cpuMicrosPerRequest / result.cpuMicrosPerRequest), `${result.othersCores.toFixed(2)} cores`]);
  }
  const widths = lines[0]!.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  for (const line of lines) process.stdout.write(`${line.map((cell, c) => (c ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ')}\n`);
}

/** The round with the least CPU a request. */
function best(runs: readonly Measured[]): Measured {
  return runs.reduce((a, b) => (b.cpuMicrosPerRequest < a.cpuMicrosPerRequest ? b : a));
}

/** One server's rounds as one row: mean throughput and CPU, mean p50, worst p99, counts summed. */
function mean(runs: readonly Measured[]): Measured {
  const average = (f: (m: Measured) => number) => runs.reduce((sum, m) => sum + f(m), 0) / runs.length;
  const sum = (f: (m: Measured) => number) => runs.reduce((total, m) => total + f(m), 0);
  return {
    requestsPerSec: average((m) => m.requestsPerSec), cpuMicrosPerRequest: average((m) => m.cpuMicrosPerRequest), othersCores: average((m) => m.othersCores),
    p50Ms: Number(average((m) => m.p50Ms).toFixed(2)), p99Ms: Math.max(...runs.map((m) => m.p99Ms)),
    total: sum((m) => m.total), non2xx: sum((m) => m.non2xx), errors: sum((m) => m.errors),
  };
}

async function main(): Promise<void> {
  process.stdout.write(`GET /api/v1/regions, ${CONNECTIONS} connections (${loadGenerator}), ${WARMUP_SECS} s warm-up + ${DURATION_SECS} s each, ${ROUNDS} round(s) in alternating order\n`);
  const target = ONLY.has('postgres') ? await postgresTarget() : null;
  const servers: { name: string; run: () => Promise<Measured> }[] = [
    ...(ONLY.has('bare') ? [{ name: 'bare node:http', run: () => benchServer('bare') }] : []),
    ...(ONLY.has('pglite') ? [{ name: 'keepwatch (PGlite)', run: () => benchServer('keepwatch') }] : []),
    ...(target ? [{ name: 'keepwatch (PostgreSQL)', run: () => benchServer('keepwatch', target.url) }] : []),
  ];
  const runs = new Map<string, Measured[]>(servers.map((s) => [s.name, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of round % 2 ? [...servers].reverse() : servers) runs.get(server.name)!.push(await server.run());
    }
  } finally {
    await target?.drop();
  }
  if (servers.length) {
    process.stdout.write('\nbest round of each server:\n');
    printTable(servers.map((s) => ({ name: s.name, result: best(runs.get(s.name)!) })));
    process.stdout.write(`\nmean of ${ROUNDS} round(s):\n`);
    printTable(servers.map((s) => ({ name: s.name, result: mean(runs.get(s.name)!) })));
  }
  if (!target && ONLY.has('postgres')) process.stdout.write(`PostgreSQL skipped: nothing answers at ${DEFAULT_PG_URL} (set DATABASE_URL)\n`);
}

await main();
