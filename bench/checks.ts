// `npm run bench:checks`: the check engine under load. N http monitors at a 10 s interval (1,000
// and 10,000 by default) against a local HTTP server, on PGlite and (with DATABASE_URL) on
// PostgreSQL; checks/s achieved against scheduled, scheduling lag, CPU per check and RSS of the
// engine process, against a bare loop of the same GETs. `--nodes 2` (PostgreSQL): two engines on
// one database, no slot run twice or missed, then one killed -9 and its work taken over.
// Every part runs in a process of its own: the target server (bench/checks-target.ts), the seeding
// and each engine (bench/checks-node.ts), the bare loop (bench/checks-bare.ts); this one only
// orchestrates, reads /proc and does the arithmetic afterwards. Not a test. See bench/README.md.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DEFAULT_LEASE_TTL_MS } from '../src/checks/index.js';
import { SERVE_NODE_FLAGS } from '../src/process-memory.js';
import { nextSlotMs, phaseMs, shardOf } from '../src/scheduler/slots.js';
import { compileTree, type CompiledTree } from './checks-build.js';
import { summariseProfile } from './checks-profile.js';
import { cpuMsOf, machineCpuMs, memoryOf, RssSampler } from './checks-proc.js';
import {
  COUNT_SQL, INTERVAL_MS, INTERVAL_SECS, RESULTS_SQL, resultColumnsOf, TARGETS_SQL, type NodeOptions, type NodeStatus, type ResultColumns, type ResultRow, type StatementTime,
} from './checks-shared.js';

const { values: flags } = parseArgs({
  options: {
    monitors: { type: 'string', default: '1000,10000' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '90' },
    store: { type: 'string', default: 'pglite,postgres' },
    nodes: { type: 'string', default: '1' },
    'lease-ttl': { type: 'string' },
    'after-kill': { type: 'string' },
    'bare-seconds': { type: 'string' },
    'no-bare': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    statements: { type: 'boolean', default: false },
    quiet: { type: 'string', default: '60' },
    tsx: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (flags.help) {
  process.stdout.write(`npm run bench:checks -- [options]
  --monitors 1000,10000  monitor counts to run, each on every store
  --seconds 60           measured window per run
  --warmup 90            seconds between the engine's start (or the 2-node lease split) and the window: past the
                         rollup folder's first minute, so the window holds its steady pace
  --store pglite,postgres  stores; PostgreSQL only when DATABASE_URL is set (a scratch database is created on it and dropped)
  --nodes 1|2            2: two engines on one PostgreSQL database, then one killed -9
  --lease-ttl MS         the engine's lease TTL (default: the engine's own, 15000)
  --after-kill SECONDS   with --nodes 2, how long to watch after the kill (default: 4/3 TTL + 2 intervals)
  --bare-seconds S       bare loop window (default: min(--seconds, 30)); --no-bare skips it
  --quiet 60             before each window, wait up to this long for the rest of the machine to fall under 0.25 of a core
  --tsx                  run the processes under tsx instead of compiling src/ and bench/ to JavaScript first (quicker to start; tsx's loader adds to RSS)
  --cpu-prof DIR         profile the engine over the window (inspector) and summarise; figures of a profiled run are not comparable
  --statements           time every statement the (first) engine awaits over the window and list the costliest (on PGlite, each one's own cost)
`);
  process.exit(0);
}

const MONITORS = flags.monitors.split(',').map(Number);
const SECONDS = Number(flags.seconds);
const WARMUP_SECS = Number(flags.warmup);
const NODES = Number(flags.nodes);
const LEASE_TTL_MS = flags['lease-ttl'] ? Number(flags['lease-ttl']) : undefined;
const EFFECTIVE_TTL_MS = LEASE_TTL_MS ?? DEFAULT_LEASE_TTL_MS;
const AFTER_KILL_SECS = flags['after-kill'] ? Number(flags['after-kill']) : Math.ceil((EFFECTIVE_TTL_MS * 4) / 3 / 1000 + 2 * INTERVAL_SECS);
const BARE_SECS = flags['bare-seconds'] ? Number(flags['bare-seconds']) : Math.min(SECONDS, 30);
const STORES = flags.store.split(',').filter((s) => NODES === 1 || s === 'postgres');
const PROFILE_DIR = flags['cpu-prof'];
const STATEMENTS = flags.statements;
const QUIET_SECS = Number(flags.quiet);
const REGION = 'local';

const GOALS = { monitors: 10_000, lagP99Ms: 1000, cpuMsPerCheck: 0.35, rssMb: 300 };

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
/** The JavaScript the processes run (unless --tsx): see bench/checks-build.ts. */
let compiled: CompiledTree | null = null;
const progress = (line: string) => process.stderr.write(`· ${line}\n`);

// ---------------------------------------------------------------- child processes

/** A forked bench process: answers matched to requests by id, log lines shown (a few) prefixed. */
class Child {
  readonly proc: ChildProcess;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>(); // eslint-disable-line @typescript-eslint/no-explicit-any
  private nextId = 1;
  private shown = 0;
  private readonly exited: Promise<number | null>;

  constructor(readonly name: string, file: string, args: string[], execArgv: string[] = []) {
    this.proc = compiled
      ? fork(join(compiled.benchDir, file.replace(/\.ts$/, '.js')), args, { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
      : fork(here(file), args, { execArgv: ['--import', 'tsx', ...execArgv], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const show = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        // Fastify's and Node's deprecation notices are not bench output; warnings of the engine are.
        if (/DeprecationWarning|ExperimentalWarning|--trace-(deprecation|warnings)/.test(line)) continue;
        if (this.shown++ < 12) process.stderr.write(`  [${this.name}] ${line.slice(0, 400)}\n`);
        else if (this.shown === 13) process.stderr.write(`  [${this.name}] (further lines not shown)\n`);
      }
    };
    this.proc.stdout!.on('data', show);
    this.proc.stderr!.on('data', show);
    this.proc.on('message', (m: { id?: number; answer?: unknown; error?: string }) => {
      const waiter = this.pending.get(m.id ?? 0);
      if (!waiter) return;
      this.pending.delete(m.id ?? 0);
      if (m.error) waiter.reject(new Error(`${this.name}: ${m.error}`));
      else waiter.resolve(m.answer ?? m);
    });
    this.exited = new Promise((resolve) => this.proc.once('exit', (code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`${this.name} exited (${code})`));
      this.pending.clear();
      resolve(code);
    }));
  }

  get pid(): number { return this.proc.pid!; }

  /** The first message (id 0, or any message of a process without ids). */
  first<T>(): Promise<T> {
    return new Promise((resolve, reject) => this.pending.set(0, { resolve, reject }));
  }

  call<T>(type: string, extra: object = {}, timeoutMs = 0): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = timeoutMs ? setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}: no answer to ${type} within ${timeoutMs / 1000} s`));
      }, timeoutMs) : undefined;
      this.pending.set(id, { resolve: (v) => { clearTimeout(timer); resolve(v); }, reject: (e) => { clearTimeout(timer); reject(e); } });
      this.proc.send({ id, type, ...extra });
    });
  }

  /** A plain-string message to a process that answers without ids (target, bare loop). */
  ask<T>(message: string): Promise<T> {
    const answer = this.first<T>();
    this.proc.send(message);
    return answer;
  }

  async stop(message: string | object = 'stop'): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.send(message);
    const timeout = setTimeout(() => this.proc.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timeout);
  }

  waitExit(): Promise<number | null> {
    return this.exited;
  }

  kill9(): Promise<number | null> {
    this.proc.kill('SIGKILL');
    return this.exited;
  }
}

// ---------------------------------------------------------------- PostgreSQL scratch databases

interface ScratchDb { url: string; name: string; admin: pg.Client; drop(): Promise<void> }

/** A fresh database on DATABASE_URL's server (as scripts/ci-db.mjs makes them), dropped afterwards. */
async function scratchDatabase(): Promise<ScratchDb> {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 3000 });
  await admin.connect();
  const name = `kw_bench_checks_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  const scratch = {
    url: url.toString(), name, admin,
    async drop() {
      liveDatabases.delete(scratch);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
  liveDatabases.add(scratch);
  return scratch;
}

const liveDatabases = new Set<ScratchDb>();
const liveChildren = new Set<Child>();
process.once('SIGINT', () => {
  for (const child of liveChildren) child.proc.kill('SIGKILL');
  compiled?.remove();
  void Promise.allSettled([...liveDatabases].map((db) => db.drop())).then(() => process.exit(130));
});

/** CPU time so far of the PostgreSQL backends serving `db` (the engine's pool), by pid. */
async function backendCpu(db: ScratchDb | null): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!db) return out;
  const { rows } = await db.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db.name]);
  for (const { pid } of rows) {
    const ms = cpuMsOf(pid);
    if (ms !== null) out.set(pid, ms);
  }
  return out;
}

/** Backend CPU spent between two readings; a backend that closed in between is lost (so: at least this). */
function backendDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** CPU of this bench's own processes so far (the engines, the target server, this one, the store's backends), ms. */
async function oursCpuMs(pids: readonly number[], db: ScratchDb | null): Promise<number> {
  const own = process.cpuUsage();
  let sum = (own.user + own.system) / 1000;
  for (const pid of pids) sum += cpuMsOf(pid) ?? 0;
  for (const ms of (await backendCpu(db)).values()) sum += ms;
  return sum;
}

/**
 * Waits (at most QUIET_SECS) until the rest of the machine (other people's tests, say) uses under
 * a quarter of a core over 3 s: figures taken beside a busy neighbour are not this engine's.
 */
async function waitForQuiet(pids: readonly number[], db: ScratchDb | null): Promise<void> {
  if (QUIET_SECS <= 0) return;
  const deadline = Date.now() + QUIET_SECS * 1000;
  for (;;) {
    const m0 = machineCpuMs();
    const o0 = await oursCpuMs(pids, db);
    await sleep(3000);
    const m1 = machineCpuMs();
    const o1 = await oursCpuMs(pids, db);
    const others = (m1.busy - m0.busy - (o1 - o0)) / 3000;
    if (others < 0.25) return;
    if (Date.now() > deadline) {
      progress(`the machine is still busy with other work (${others.toFixed(2)} cores); measuring anyway`);
      return;
    }
    progress(`waiting for other work on the machine to settle (${others.toFixed(2)} cores)`);
  }
}

/** Where the analysis reads results: PostgreSQL directly, PGlite through the engine that holds it. */
interface ResultSource {
  count(from: number, to: number): Promise<number>;
  results(from: number, to: number): Promise<ResultColumns>;
  close(): Promise<void>;
}

/** An overloaded engine answers slowly; PostgreSQL is read around it. */
async function resultSource(db: ScratchDb | null, engine: Child): Promise<ResultSource> {
  if (!db) {
    return {
      count: async (from, to) => (await engine.call<{ n: number }>('count', { from, to }, 30_000)).n,
      results: (from, to) => engine.call<ResultColumns>('results', { from, to }, 600_000),
      close: async () => {},
    };
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const window = (from: number, to: number) => [new Date(from), new Date(to)];
  return {
    count: async (from, to) => (await client.query<{ n: number }>(COUNT_SQL, window(from, to))).rows[0]!.n,
    results: async (from, to) => resultColumnsOf((await client.query<ResultRow>(RESULTS_SQL, window(from, to))).rows, (await client.query<{ id: string }>(TARGETS_SQL)).rows),
    close: () => client.end(),
  };
}

// ---------------------------------------------------------------- arithmetic

function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const median = (values: readonly number[]) => percentile([...values].sort((a, b) => a - b), 50);

interface SlotTally {
  /** (monitor, slot) pairs due in the window. */
  expected: number;
  /** Pairs with at least one result. */
  ran: number;
  /** Pairs with more than one. */
  twice: number;
  missed: number;
  lagP50: number;
  lagP99: number;
  lagMax: number;
  /** Slots missed, by time. */
  missedSlots: number[];
}

/**
 * Results against slots. A result's slot is the last slot of its monitor at or before its
 * checked_at (slots are `k * interval + phase`, the phase from the monitor's id: src/scheduler/slots.ts);
 * its lag is checked_at minus that slot, which is what the scheduler's keepwatch_check_lag_seconds
 * observes (the start of the check against its slot).
 */
function tally(results: ResultColumns, phases: readonly number[], from: number, to: number, monitors?: ReadonlySet<number>): SlotTally {
  const seen = new Map<string, number>();
  const lags: number[] = [];
  for (let i = 0; i < results.at.length; i++) {
    const t = results.target[i]!;
    if (monitors && !monitors.has(t)) continue;
    const at = results.at[i]!;
    const phase = phases[t]!;
    const slot = at - ((((at - phase) % INTERVAL_MS) + INTERVAL_MS) % INTERVAL_MS);
    if (slot < from || slot >= to) continue;
    const key = `${t}:${slot}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    lags.push(at - slot);
  }
  let expected = 0;
  let twice = 0;
  const missedSlots: number[] = [];
  for (let t = 0; t < phases.length; t++) {
    if (monitors && !monitors.has(t)) continue;
    for (let slot = nextSlotMs(from, INTERVAL_MS, phases[t]!); slot < to; slot += INTERVAL_MS) {
      expected++;
      const n = seen.get(`${t}:${slot}`) ?? 0;
      if (n === 0) missedSlots.push(slot);
      if (n > 1) twice++;
    }
  }
  lags.sort((a, b) => a - b);
  return {
    expected, ran: expected - missedSlots.length, twice, missed: missedSlots.length,
    lagP50: percentile(lags, 50), lagP99: percentile(lags, 99), lagMax: lags.at(-1) ?? NaN, missedSlots,
  };
}

/** Results whose check started within [from, to). */
function startedWithin(results: ResultColumns, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < results.at.length; i++) if (results.at[i]! >= from && results.at[i]! < to) out.push(i);
  return out;
}

interface SchedulerMetrics { started: number; throttled: number; skipped: number; leaseLapsed: number; lagP50: string; lagP99: string }

/**
 * The scheduler's own view of the window, summed over nodes: keepwatch_checks_total, _throttled_total,
 * keepwatch_check_slots_skipped_total, _lease_lapsed_total, and the quantiles of keepwatch_check_lag_seconds as the
 * bucket bounds they fall under (all a histogram can say).
 */
function schedulerMetrics(deltas: Record<string, number>[]): SchedulerMetrics {
  const sum = (name: string) => deltas.reduce((s, d) => s + (d[name] ?? 0), 0);
  const buckets = new Map<number, number>();
  for (const d of deltas) {
    for (const [k, v] of Object.entries(d)) {
      const le = /^keepwatch_check_lag_seconds_bucket\{le=(.+)\}$/.exec(k)?.[1];
      if (le !== undefined) buckets.set(le === '+Inf' ? Infinity : Number(le), (buckets.get(le === '+Inf' ? Infinity : Number(le)) ?? 0) + v);
    }
  }
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  const quantile = (q: number) => {
    const hit = sorted.find(([, count]) => count >= q * total);
    return !total || !hit ? '-' : hit[0] === Infinity ? `> ${sorted.at(-2)?.[0]} s` : `<= ${hit[0] * 1000} ms`;
  };
  return {
    started: sum('keepwatch_checks_total'), throttled: sum('keepwatch_checks_throttled_total'), skipped: sum('keepwatch_check_slots_skipped_total'),
    leaseLapsed: sum('keepwatch_check_slots_lease_lapsed_total'),
    lagP50: quantile(0.5), lagP99: quantile(0.99),
  };
}

// ---------------------------------------------------------------- one run

interface EngineFigures {
  store: string;
  monitors: number;
  nodes: number;
  seedMs: number;
  scheduledPerSec: number;
  /** Checks the scheduler started in the window (keepwatch_checks_total), per second. */
  startedPerSec: number;
  /** Results in the store for checks started in the window, per second: below startedPerSec when the writer falls behind. */
  writtenPerSec: number;
  slots: SlotTally;
  cpuMsPerCheck: number;
  targetCpuMsPerRequest: number;
  pgCpuMsPerCheck: number | null;
  machineBusyPct: number;
  /** Cores used by processes not of this bench during the window. */
  othersCores: number;
  rssSteadyMb: number;
  rssMaxMb: number;
  /** Engine a's memory at the window's end. */
  memory: NodeStatus['memory'];
  /** RSS at the window's end less at its start, per minute (summed over nodes): a leak shows here. */
  rssGrowthMbPerMin: number;
  rssPeakMb: number;
  probeP50Ms: number;
  probeP99Ms: number;
  statuses: Record<string, number>;
  errors: string[];
  metrics: SchedulerMetrics;
  profile?: string;
  statements?: StatementTime[];
  kill?: KillFigures;
}

interface KillFigures {
  victimShards: number;
  victimMonitors: number;
  takeoverMs: number;
  /** The victim's monitors: slots before the kill with no result (buffered, unwritten), and after it. */
  lostBeforeKill: number;
  missedAfterKill: number;
  lastMissedAfterKillMs: number;
  survivorMissed: number;
  twice: number;
}

async function engineRun(store: string, monitors: number, target: Child, targetPort: number): Promise<EngineFigures> {
  const db = store === 'postgres' ? await scratchDatabase() : null;
  const dirs: string[] = [];
  // Every process of the run shares these; nodes on one PostgreSQL database must share the KEK.
  const shared = { operatorSecret: `bench-${randomBytes(8).toString('hex')}`, kek: randomBytes(32).toString('base64') };
  const nodeOptions = (): NodeOptions => {
    const dataDir = mkdtempSync(join(tmpdir(), 'keepwatch-bench-checks-'));
    dirs.push(dataDir);
    return { dataDir, databaseUrl: db?.url, operatorSecret: shared.operatorSecret, kek: shared.kek, port: targetPort, monitors, leaseTtlMs: LEASE_TTL_MS, statements: STATEMENTS };
  };
  const engines: Child[] = [];
  let sampler: RssSampler | undefined;
  try {
    const first = nodeOptions();
    progress(`${store}, ${monitors} monitors: seeding through POST /api/v1/targets/bulk`);
    const seeder = new Child('seed', './checks-node.ts', ['seed', JSON.stringify(first)]);
    liveChildren.add(seeder);
    const { seedMs } = await seeder.first<{ seedMs: number }>();
    await seeder.waitExit();
    liveChildren.delete(seeder);

    // The engine runs with node's flags as `npm start` and bin/keepwatch.js start `keepwatch serve`.
    const startEngine = async (name: string, options: NodeOptions) => {
      const child = new Child(name, './checks-node.ts', ['engine', JSON.stringify(options)], [...SERVE_NODE_FLAGS, '--expose-gc']);
      liveChildren.add(child);
      engines.push(child);
      await child.first();
      sampler?.watch(child.pid);
      return child;
    };
    progress(`${store}, ${monitors} monitors: engine starting${NODES === 2 ? ' (2 nodes)' : ''}`);
    const a = await startEngine('engine A', first);
    sampler = new RssSampler([a.pid]);
    const b = NODES === 2 ? await startEngine('engine B', nodeOptions()) : undefined;
    if (b) {
      // Shares even out over a few lease rounds (renew every TTL / 3): wait for 32 / 32.
      const deadline = Date.now() + 4 * EFFECTIVE_TTL_MS + 30_000;
      for (;;) {
        const [sa, sb] = await Promise.all([a.call<NodeStatus>('status'), b.call<NodeStatus>('status')]);
        if (sa.shards.length === 32 && sb.shards.length === 32) break;
        if (Date.now() > deadline) throw new Error(`lease split never settled: A ${sa.shards.length}, B ${sb.shards.length}`);
        await sleep(500);
      }
      progress(`${store}: leases split 32 / 32`);
    }
    progress(`${store}, ${monitors} monitors: warming up ${WARMUP_SECS} s`);
    await sleep(WARMUP_SECS * 1000);
    const ourPids = [...engines.map((e) => e.pid), target.pid];
    await waitForQuiet(ourPids, db);
    const before = await Promise.all(engines.map((e) => e.call<NodeStatus>('status')));

    // ---- the window
    progress(`${store}, ${monitors} monitors: measuring ${SECONDS} s`);
    if (PROFILE_DIR) await a.call('prof-start');
    if (STATEMENTS) await a.call('stmts-start');
    const pg0 = await backendCpu(db);
    const machine0 = machineCpuMs();
    const ours0 = await oursCpuMs(ourPids, db);
    const t0 = Date.now();
    const cpu0 = engines.map((e) => cpuMsOf(e.pid)!);
    const target0 = cpuMsOf(target.pid)!;
    await sleep(SECONDS * 1000);
    const t1 = Date.now();
    const cpu1 = engines.map((e) => cpuMsOf(e.pid)!);
    const target1 = cpuMsOf(target.pid)!;
    const machine1 = machineCpuMs();
    const ours1 = await oursCpuMs(ourPids, db);
    const pg1 = await backendCpu(db);
    const profilePath = PROFILE_DIR ? (await a.call<{ path: string }>('prof-stop', { dir: PROFILE_DIR })).path : undefined;
    const statements = STATEMENTS ? (await a.call<{ statements: StatementTime[] }>('stmts-stop')).statements : undefined;
    const after = await Promise.all(engines.map((e) => e.call<NodeStatus>('status')));
    after[0]!.memory.live = (await a.call<{ mb: number }>('live-heap')).mb;
    const peaks = engines.map((e) => memoryOf(e.pid)!.peakMb);

    // ---- the kill
    let killAt = 0;
    let victimShards: number[] = [];
    if (b) {
      // Let the window's last batch (the writer flushes every 250 ms) land before the kill, so what the
      // kill loses is counted after the window, not in it.
      await sleep(1000);
      victimShards = (await b.call<NodeStatus>('status')).shards;
      killAt = Date.now();
      await b.kill9();
      liveChildren.delete(b);
      progress(`${store}: engine B killed -9 (held ${victimShards.length} shards); watching ${AFTER_KILL_SECS} s`);
      await sleep(AFTER_KILL_SECS * 1000);
    }
    const end = Date.now();
    // Checks started by `end` finish and their batch is written: wait until their count stops growing
    // (an overloaded engine finishes its checks late; a result still in flight would count as missed).
    const source = await resultSource(db, a);
    for (let last = -1, settleUntil = Date.now() + 90_000; ;) {
      await sleep(2000);
      const n = await source.count(t0 - INTERVAL_MS, end).catch(() => -2);
      if (n === last || Date.now() > settleUntil) break;
      last = n;
    }
    const results = await source.results(t0 - INTERVAL_MS, end + 2 * INTERVAL_MS);
    await source.close();
    for (const e of engines) {
      if (e.proc.exitCode === null && e.proc.signalCode === null) await e.stop({ id: -2, type: 'stop' });
      liveChildren.delete(e);
    }

    // ---- arithmetic
    const phases = results.targetIds.map((id) => phaseMs(id, REGION, INTERVAL_MS));
    const slots = tally(results, phases, t0, t1);
    const inWindow = startedWithin(results, t0, t1);
    const durations = inWindow.map((i) => results.durationMs[i]!).sort((x, y) => x - y);
    const cpu = cpu1.reduce((s, v, i) => s + v - cpu0[i]!, 0);
    const rss = engines.map((e) => sampler!.between(e.pid, t0, t1));
    const metrics = schedulerMetrics(after.map((s, i) => Object.fromEntries(Object.entries(s.counters).map(([k, v]) => [k, v - (before[i]!.counters[k] ?? 0)]))));
    // Per check started: a writer that falls behind must not make checks look dearer (or cheaper).
    const started = metrics.started || inWindow.length;
    const figures: EngineFigures = {
      store, monitors, nodes: engines.length, seedMs,
      scheduledPerSec: slots.expected / ((t1 - t0) / 1000),
      startedPerSec: started / ((t1 - t0) / 1000),
      writtenPerSec: inWindow.length / ((t1 - t0) / 1000),
      slots,
      cpuMsPerCheck: cpu / started,
      targetCpuMsPerRequest: (target1 - target0) / started,
      pgCpuMsPerCheck: db ? backendDelta(pg0, pg1) / started : null,
      machineBusyPct: ((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * 100,
      othersCores: Math.max(0, (machine1.busy - machine0.busy - (ours1 - ours0)) / (t1 - t0)),
      rssSteadyMb: Math.max(...rss.map(median)),
      rssMaxMb: Math.max(...rss.flat()),
      memory: after[0]!.memory,
      rssGrowthMbPerMin: rss.reduce((sum, series) => sum + ((series.at(-1) ?? 0) - (series[0] ?? 0)), 0) / ((t1 - t0) / 60_000),
      rssPeakMb: Math.max(...peaks),
      probeP50Ms: percentile(durations, 50),
      probeP99Ms: percentile(durations, 99),
      statuses: results.statuses,
      errors: results.errors,
      metrics,
      profile: profilePath,
      statements,
    };
    if (b) {
      const victims = new Set<number>();
      const shardSet = new Set(victimShards);
      results.targetIds.forEach((id, t) => { if (shardSet.has(shardOf(id))) victims.add(t); });
      const survivors = new Set(results.targetIds.map((_, t) => t).filter((t) => !victims.has(t)));
      const victimTally = tally(results, phases, killAt - INTERVAL_MS, end, victims);
      let takeover = Infinity;
      for (let i = 0; i < results.at.length; i++) {
        if (victims.has(results.target[i]!) && results.at[i]! >= killAt) takeover = Math.min(takeover, results.at[i]! - killAt);
      }
      const afterKill = victimTally.missedSlots.filter((s) => s >= killAt);
      figures.kill = {
        victimShards: victimShards.length, victimMonitors: victims.size, takeoverMs: takeover,
        lostBeforeKill: victimTally.missedSlots.length - afterKill.length,
        missedAfterKill: afterKill.length,
        lastMissedAfterKillMs: afterKill.length ? Math.max(...afterKill) - killAt : 0,
        survivorMissed: tally(results, phases, t1, end, survivors).missed,
        twice: tally(results, phases, t1, end).twice,
      };
    }
    progress(`${storeName(store)} ${monitors}${NODES > 1 ? ' x2' : ''}: ${f1(figures.startedPerSec)} checks/s started of ${f1(figures.scheduledPerSec)}, ${f1(figures.writtenPerSec)} written, `
      + `${slots.missed} missed, ${slots.twice} twice, lag p50 ${slots.lagP50} ms p99 ${slots.lagP99} ms, ${f3(figures.cpuMsPerCheck)} ms CPU/check, `
      + `RSS ${figures.rssSteadyMb.toFixed(0)} MB (peak ${figures.rssPeakMb.toFixed(0)} MB), others ${f2(figures.othersCores)} cores`);
    return figures;
  } finally {
    sampler?.stop();
    for (const e of engines) if (e.proc.exitCode === null && e.proc.signalCode === null) await e.kill9();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  }
}

interface BareFigures { monitors: number; perSec: number; cpuMsPerRequest: number; targetCpuMsPerRequest: number; failed: number }

async function bareRun(monitors: number, target: Child, targetPort: number): Promise<BareFigures> {
  const rate = monitors / INTERVAL_SECS;
  progress(`bare loop, ${rate} GET/s: warming up 3 s, then measuring ${BARE_SECS} s`);
  const bare = new Child('bare', './checks-bare.ts', [String(targetPort), String(rate), String(monitors)]);
  liveChildren.add(bare);
  try {
    await bare.first();
    await sleep(3000);
    await waitForQuiet([bare.pid, target.pid], null);
    const count0 = await bare.ask<{ answered: number; failed: number }>('count');
    const cpu0 = cpuMsOf(bare.pid)!;
    const target0 = cpuMsOf(target.pid)!;
    const t0 = Date.now();
    await sleep(BARE_SECS * 1000);
    const count1 = await bare.ask<{ answered: number; failed: number }>('count');
    const cpu1 = cpuMsOf(bare.pid)!;
    const target1 = cpuMsOf(target.pid)!;
    const answered = count1.answered - count0.answered;
    const figures = {
      monitors, perSec: answered / ((Date.now() - t0) / 1000), cpuMsPerRequest: (cpu1 - cpu0) / answered,
      targetCpuMsPerRequest: (target1 - target0) / answered, failed: count1.failed - count0.failed,
    };
    progress(`bare loop ${rate}/s: ${f1(figures.perSec)} GET/s, ${f3(figures.cpuMsPerRequest)} ms CPU/request, ${figures.failed} failed`);
    return figures;
  } finally {
    await bare.stop();
    liveChildren.delete(bare);
  }
}

// ---------------------------------------------------------------- report

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-');
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '-');
const ms = (x: number) => (Number.isFinite(x) ? `${x} ms` : '-');
const storeName = (s: string) => (s === 'postgres' ? 'PostgreSQL' : 'PGlite');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

function report(runs: EngineFigures[], bares: BareFigures[]): void {
  const out: string[] = [];
  const bareOf = (n: number) => bares.find((b) => b.monitors === n);
  out.push(`Check engine: http monitors at ${INTERVAL_SECS} s against a local server, ${SECONDS} s measured after ${WARMUP_SECS} s warm-up; `
    + `Node ${process.version}; lease TTL ${EFFECTIVE_TTL_MS / 1000} s${LEASE_TTL_MS ? '' : ' (engine default)'}`, '');
  const rows = [['store', 'nodes', 'monitors', 'sched/s', 'started/s', 'written/s', 'missed', 'twice', 'lag p50', 'lag p99', 'CPU ms/check', 'bare ms/req', 'engine/bare', 'RSS steady', 'RSS peak', 'PG ms/check', 'others']];
  for (const r of runs) {
    const bare = bareOf(r.monitors);
    rows.push([storeName(r.store), String(r.nodes), String(r.monitors), f1(r.scheduledPerSec), f1(r.startedPerSec), f1(r.writtenPerSec), String(r.slots.missed), String(r.slots.twice),
      ms(r.slots.lagP50), ms(r.slots.lagP99), f3(r.cpuMsPerCheck), bare ? f3(bare.cpuMsPerRequest) : '-', bare ? `${f1(r.cpuMsPerCheck / bare.cpuMsPerRequest)}x` : '-',
      `${r.rssSteadyMb.toFixed(0)} MB`, `${r.rssPeakMb.toFixed(0)} MB`, r.pgCpuMsPerCheck === null ? '-' : f3(r.pgCpuMsPerCheck), `${f2(r.othersCores)} cores`]);
  }
  out.push(table(rows), '');
  // The engine's fixed costs (timers, lease and poll loops, the rate limiter's sync) weigh on a small
  // run's CPU per check; the slope between two sizes on one store is the cost one more check adds.
  for (const store of new Set(runs.map((r) => `${r.store}/${r.nodes}`))) {
    const [small, large] = runs.filter((r) => `${r.store}/${r.nodes}` === store).sort((x, y) => x.monitors - y.monitors).filter((_, i, all) => i === 0 || i === all.length - 1);
    if (!small || !large || small === large) continue;
    // A saturated engine's CPU per check says how much CPU there was, not what a check costs.
    if ([small, large].some((r) => r.slots.missed > r.slots.expected * 0.001)) continue;
    const rate = (r: EngineFigures) => r.cpuMsPerCheck * r.startedPerSec;
    const marginal = (rate(large) - rate(small)) / (large.startedPerSec - small.startedPerSec);
    out.push(`${storeName(small.store)}${small.nodes > 1 ? ` x${small.nodes}` : ''}: ${f1(rate(small))} ms CPU/s at ${f1(small.startedPerSec)} checks/s, ${f1(rate(large))} at ${f1(large.startedPerSec)}: `
      + `${f3(marginal)} ms per additional check, ${f1(rate(small) - marginal * small.startedPerSec)} ms/s fixed`);
  }
  out.push('');
  for (const r of runs) {
    const m = r.metrics;
    out.push(`${storeName(r.store)} ${r.monitors}${r.nodes > 1 ? ` x${r.nodes} nodes` : ''}: machine ${r.machineBusyPct.toFixed(0)}% busy; seeded in ${(r.seedMs / 1000).toFixed(1)} s; `
      + `results ${Object.entries(r.statuses).map(([k, v]) => `${k} ${v}`).join(', ')}${r.errors.length ? ` (errors: ${r.errors.join('; ')})` : ''}; `
      + `probe duration p50 ${r.probeP50Ms} ms, p99 ${r.probeP99Ms} ms; lag max ${r.slots.lagMax} ms; RSS max in window ${r.rssMaxMb.toFixed(0)} MB, growing ${f1(r.rssGrowthMbPerMin)} MB/min `
      + `(at the end: V8 heap ${r.memory.heapUsed} of ${r.memory.heapTotal} MB, ${r.memory.live} MB live after a full GC, external ${r.memory.external} MB${r.memory.wasm === null ? '' : `, store WASM memory ${r.memory.wasm} MB in size (part of external; not all resident)`}); `
      + `target server ${f3(r.targetCpuMsPerRequest)} ms/req; the scheduler's metrics over the window: ${m.started} checks started, `
      + `${m.throttled} throttled, ${m.skipped} slots skipped, ${m.leaseLapsed} not run for a lapsed lease, lag p50 ${m.lagP50}, p99 ${m.lagP99}`);
  }
  if (bares.length) {
    out.push('', table([['bare loop', 'GET/s', 'CPU ms/req', 'target ms/req', 'failed'],
      ...bares.map((b) => [`${b.monitors / INTERVAL_SECS}/s`, f1(b.perSec), f3(b.cpuMsPerRequest), f3(b.targetCpuMsPerRequest), String(b.failed)])]));
  }
  for (const r of runs.filter((x) => x.kill)) {
    const k = r.kill!;
    out.push('', `kill -9 of one of two nodes (${r.monitors} monitors, lease TTL ${EFFECTIVE_TTL_MS / 1000} s): it held ${k.victimShards} shards, ${k.victimMonitors} monitors.`,
      `  the survivor's first check of them ${f1(k.takeoverMs / 1000)} s after the kill (goal: within one interval, ${INTERVAL_SECS} s: ${k.takeoverMs <= INTERVAL_MS ? 'met' : 'MISSED'});`,
      `  their checks missed: ${k.missedAfterKill} slots after the kill (${f2(k.missedAfterKill / Math.max(1, k.victimMonitors))} per monitor, the last ${f1(k.lastMissedAfterKillMs / 1000)} s after it), `
        + `${k.lostBeforeKill} slots just before it (run, but their results were still in the dead node's write buffer);`,
      `  the survivor's own monitors missed ${k.survivorMissed}; slots run twice after the kill: ${k.twice}.`);
    if (r.writtenPerSec < 0.99 * r.startedPerSec) {
      out.push(`  (the writer fell behind, ${f1(r.writtenPerSec)} results/s written of ${f1(r.startedPerSec)} checks/s started: most of these slots lack a result not yet written, not a check not run)`);
    }
  }
  out.push('', `Goals: ${GOALS.monitors.toLocaleString('en')} monitors at ${INTERVAL_SECS} s (${GOALS.monitors / INTERVAL_SECS} checks/s) sustained with lag p99 < ${GOALS.lagP99Ms / 1000} s; `
    + `<= ${GOALS.cpuMsPerCheck} ms CPU per check all-in; RSS < ${GOALS.rssMb} MB with ${GOALS.monitors.toLocaleString('en')} monitors.`);
  for (const r of runs) {
    const verdicts: string[] = [];
    const sustained = r.slots.missed <= r.slots.expected * 0.001;
    if (r.monitors >= GOALS.monitors) {
      verdicts.push(`throughput ${sustained ? 'met' : 'MISSED'} (${f1(r.writtenPerSec)}/s written of ${f1(r.scheduledPerSec)}/s, ${r.slots.missed} slots without a result)`);
      verdicts.push(`lag p99 ${r.slots.lagP99 < GOALS.lagP99Ms ? 'met' : 'MISSED'} (${r.slots.lagP99} ms)`);
    }
    verdicts.push(`CPU ${r.cpuMsPerCheck <= GOALS.cpuMsPerCheck ? 'met' : 'MISSED'} (${f3(r.cpuMsPerCheck)} ms)`);
    if (r.monitors >= GOALS.monitors) verdicts.push(`RSS ${r.rssSteadyMb < GOALS.rssMb && r.rssPeakMb < GOALS.rssMb ? 'met' : 'MISSED'} (steady ${r.rssSteadyMb.toFixed(0)} MB, peak ${r.rssPeakMb.toFixed(0)} MB)`);
    out.push(`  ${storeName(r.store)} ${r.monitors}${r.nodes > 1 ? ` x${r.nodes}` : ''}: ${verdicts.join('; ')}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  for (const r of runs.filter((x) => x.profile)) {
    process.stdout.write(`\nCPU profile of the engine, ${storeName(r.store)} ${r.monitors} (${r.profile}):\n${summariseProfile(r.profile!)}\n`);
  }
  for (const r of runs.filter((x) => x.statements)) {
    const checks = r.startedPerSec * SECONDS;
    const lines = r.statements!.slice(0, 15).map((t) =>
      `${t.ms.toFixed(0).padStart(8)} ms ${String(t.calls).padStart(7)} calls ${(t.ms / t.calls).toFixed(2).padStart(8)} ms/call ${((t.ms / checks) * 1000).toFixed(1).padStart(6)} µs/check  ${t.sql}`);
    const total = r.statements!.reduce((n, t) => n + t.ms, 0);
    process.stdout.write(`\nStatements awaited by the engine, ${storeName(r.store)} ${r.monitors} (${total.toFixed(0)} ms in all, ${((total / checks) * 1000).toFixed(1)} µs a check):\n${lines.join('\n')}\n`);
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  if (NODES !== 1 && NODES !== 2) throw new Error('--nodes is 1 or 2');
  const wantPostgres = STORES.includes('postgres');
  if (wantPostgres && !process.env.DATABASE_URL) {
    process.stderr.write(`PostgreSQL skipped: DATABASE_URL is not set (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)\n`);
    if (NODES === 2) throw new Error('--nodes 2 needs PostgreSQL: set DATABASE_URL');
  }
  const stores = STORES.filter((s) => s === 'pglite' || (s === 'postgres' && process.env.DATABASE_URL));
  if (!flags.tsx) {
    progress('compiling src/ and bench/ to JavaScript (--tsx skips this)');
    compiled = compileTree();
  }
  const target = new Child('target', './checks-target.ts', []);
  liveChildren.add(target);
  const { port } = await target.first<{ port: number }>();
  const runs: EngineFigures[] = [];
  const bares: BareFigures[] = [];
  try {
    for (const monitors of MONITORS) {
      if (!flags['no-bare']) bares.push(await bareRun(monitors, target, port));
      for (const store of stores) runs.push(await engineRun(store, monitors, target, port));
    }
  } finally {
    await target.stop();
    compiled?.remove();
  }
  report(runs, bares);
}

await main();
