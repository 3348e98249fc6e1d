// The scheduler (issue 4, "Scheduler"): runs every enabled, un-held monitor of this node's shards at
// its effective interval, on id-fixed slots, for each region this node serves; a manual monitor
// (no region) has its state restated once a minute by the node owning its shard. In memory: a heap
// of due times, one timer; the store is read when shards change hands, every `pollMs` for monitors
// changed since the last look, and in full every `reloadMs` (deletions, plan and org changes).
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Db } from '../db/db.js';
import type { PlanService } from '../plans/service.js';
import { runnableSpec } from '../probes/resolve-spec.js';
import type { ProbeResult, SecretParts } from '../probes/types.js';
import type { RegionCatalog } from '../regions/catalog.js';
import { staleAfterMsOf, type ResultSink } from '../results/types.js';
import type { Sealer } from '../shared/seal.js';
import type { CheckSpecT } from '../targets/check-specs.js';
import { NO_VARIABLES, type OrgVariables } from '../variables/index.js';
import { DueHeap } from './heap.js';
import { ShardLeases, type LeaseOptions } from './leases.js';
import { deletedSince, loadShards, toMonitor, type Monitor, type MonitorRow } from './monitors.js';
import { dispatchQuantumMs, movedPhaseMs, nextSlotMs, phaseMs, shardOf } from './slots.js';
import { HostThrottle, hostPortOf } from './throttle.js';

/** Runs one check of a monitor in a region; failures of the target are results, not throws. */
export type CheckExecutor = (monitor: Monitor, spec: CheckSpecT, signal: AbortSignal, secretParts?: SecretParts) => Promise<ProbeResult>;

/**
 * Records a restated monitor's current state as a result. It writes the result itself rather than
 * through the sink: read and write commit together, so a state set meanwhile is never overtaken.
 */
export type StateRestater = (monitor: Monitor) => Promise<void>;

export interface SchedulerOptions {
  db: Db;
  plans: PlanService;
  sealer: Sealer;
  regions: RegionCatalog;
  log: Logger;
  sink: ResultSink;
  /** The region this node's built-in runner serves. */
  region: string;
  execute: CheckExecutor;
  restate: StateRestater;
  /** The org's variable values by key (cached by the caller). */
  variables: (orgId: string) => Promise<OrgVariables>;
  perHostMaxInflight: number;
  leases: LeaseOptions;
  pollMs: number;
  reloadMs: number;
  registry?: Registry;
}

interface Job {
  monitor: Monitor; shard: number; gen: number; phase: number; due: number;
  /** The per-host throttle's key, worked out when the monitor is (re)read rather than on every check. */
  throttleKey: string | null;
  /** `performance.now()` when its monitor was last read. */
  readAt: number;
}

function throttleKeyOf(monitor: Monitor): string | null {
  const hostPort = monitor.spec ? hostPortOf(monitor.spec) : null;
  return hostPort === null ? null : `${monitor.orgId}|${hostPort}`;
}

/** Rows changed within this window before the last poll are read again: a commit can land late. */
const POLL_OVERLAP_MS = 5_000;
/** What a check without variable references substitutes from. */
/** The timer never sleeps longer than this, so a newly added earlier job is never late by more. */
const MAX_SLEEP_MS = 1_000;

export class Scheduler {
  readonly leases: ShardLeases;
  private readonly heap = new DueHeap();
  private readonly jobs = new Map<string, Job>();
  /** The checks a second its jobs ask for: what sizes the timer's quantum. */
  private checksPerSec = 0;
  private readonly throttle: HostThrottle;
  private readonly abort = new AbortController();
  private readonly inflight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewal: Promise<void> | undefined;
  private loops: NodeJS.Timeout[] = [];
  /** Whether the current lapse of this node's leases has been logged (once a lapse, not once a slot). */
  private lapseLogged = false;
  private watermark = new Date(0);
  private gen = 0;
  private stopped = false;
  private readonly ran: Counter;
  private readonly throttled: Counter;
  private readonly skipped: Counter;
  private readonly leaseLapsed: Counter;
  private readonly lag: Histogram;

  constructor(private readonly o: SchedulerOptions) {
    this.leases = new ShardLeases(o.db, o.leases);
    this.throttle = new HostThrottle(o.perHostMaxInflight);
    // Every check in flight listens on this one signal (and takes its listener off when done):
    // hundreds at once is the normal load, not a leak to warn about.
    setMaxListeners(0, this.abort.signal);
    const registers = o.registry ? [o.registry] : [];
    this.ran = new Counter({ name: 'keepwatch_checks_total', help: 'Checks started by this node', registers });
    this.throttled = new Counter({ name: 'keepwatch_checks_throttled_total', help: 'Ticks dropped by the per-host throttle', registers });
    this.skipped = new Counter({ name: 'keepwatch_check_slots_skipped_total', help: 'Slots skipped because the node fell a whole interval behind', registers });
    this.leaseLapsed = new Counter({
      name: 'keepwatch_check_slots_lease_lapsed_total', registers,
      help: "Slots not run because this node's shard leases were past their safe end (renewal failing or slower than the margin)",
    });
    this.lag = new Histogram({
      name: 'keepwatch_check_lag_seconds', help: 'Start time minus slot time', registers,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    });
  }

  async start(): Promise<void> {
    // Shards gained are loaded whole; polls then only need what changes from here on.
    this.watermark = new Date();
    const firstRound = performance.now();
    await this.renewLeases();
    this.scheduleRenewal(firstRound);
    this.loops.push(
      setInterval(() => void this.poll(), this.o.pollMs),
      setInterval(() => void this.reload(), this.o.reloadMs),
    );
    for (const loop of this.loops) loop.unref();
  }

  /** Stops scheduling, aborts checks in flight, waits for them, gives the shards back. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const loop of this.loops) clearInterval(loop);
    clearTimeout(this.renewTimer);
    clearTimeout(this.timer);
    this.abort.abort();
    // A round still running would otherwise renew in the store what the release gives back.
    await Promise.allSettled([...this.inflight, this.renewal]);
    await this.leases.release().catch((err: unknown) => this.o.log.warn({ err }, 'scheduler: releasing leases failed'));
  }

  /** Monitors scheduled on this node (for tests and the bench). */
  get scheduledCount(): number { return this.jobs.size; }

  /** The checks a second they ask for, which sizes the timer's quantum (for tests). */
  get checksPerSecond(): number { return this.checksPerSec; }

  /**
   * Rounds start every `renewMs`, but never while the last one runs: two rounds of one node at once
   * could each give back or take shards on a share the other no longer agrees with.
   */
  private scheduleRenewal(lastStarted: number): void {
    if (this.stopped) return;
    const wait = Math.max(0, lastStarted + this.o.leases.renewMs - performance.now());
    this.renewTimer = setTimeout(() => {
      const started = performance.now();
      this.renewal = this.renewLeases().finally(() => this.scheduleRenewal(started));
    }, wait);
    this.renewTimer.unref();
  }

  private async renewLeases(): Promise<void> {
    try {
      const { gained, lost } = await this.leases.renew();
      if (lost.length) this.dropShards(new Set(lost));
      if (this.lapseLogged && !this.leases.lapsed()) {
        this.lapseLogged = false;
        this.o.log.info('scheduler: shard leases renewed in time again; checks resume');
      }
      if (gained.length) await this.apply(loadShards(this.o.db, gained), false);
    } catch (err) {
      this.o.log.warn({ err }, 'scheduler: lease renewal failed; shards stop running when their leases lapse');
    }
  }

  /** A slot of a held shard passes unrun: counted, and logged once a lapse so that it is never silent. */
  private missedForLease(): void {
    this.leaseLapsed.inc();
    if (this.lapseLogged) return;
    this.lapseLogged = true;
    this.o.log.warn({ renewMs: this.o.leases.renewMs, ttlMs: this.o.leases.ttlMs },
      "scheduler: this node's shard leases are past their safe end (renewal failing or slower than ttl - renew); its checks do not run until a renewal succeeds in time");
  }

  private async poll(): Promise<void> {
    const since = new Date(this.watermark.getTime() - POLL_OVERLAP_MS);
    try {
      const started = new Date();
      await this.apply(loadShards(this.o.db, this.leases.owned(), since), false);
      // A deleted monitor leaves no row to read: its id is remembered apart.
      for (const id of await deletedSince(this.o.db, since)) this.remove(id);
      this.watermark = started;
    } catch (err) {
      this.o.log.warn({ err }, 'scheduler: polling for changed monitors failed');
    }
  }

  private async reload(): Promise<void> {
    try {
      await this.apply(loadShards(this.o.db, this.leases.owned()), true);
    } catch (err) {
      this.o.log.warn({ err }, 'scheduler: reloading monitors failed');
    }
  }

  private dropShards(shards: ReadonlySet<number>): void {
    for (const [key, job] of this.jobs) if (shards.has(job.shard)) this.remove(key);
  }

  /**
   * Brings the schedule in line with the pages read, each applied as it arrives; with `complete`,
   * monitors absent from them leave it, except one a poll read meanwhile (newer than these pages).
   */
  private async apply(pages: AsyncIterable<readonly MonitorRow[]>, complete: boolean): Promise<void> {
    const started = performance.now();
    const catalog = await this.o.regions.enabled();
    const deps = { plans: this.o.plans, sealer: this.o.sealer, catalog, log: this.o.log };
    const seen = new Set<string>();
    for await (const rows of pages) {
      for (const row of rows) {
        const monitor = await toMonitor(row, deps).catch((err: unknown) => {
          this.o.log.warn({ err, targetId: row.id }, 'scheduler: monitor cannot be handed out');
          return null;
        });
        const key = row.id;
        if (!monitor || !(monitor.restated || monitor.regions.includes(this.o.region))) {
          if (monitor && monitor.regions.length === 0) this.o.log.warn({ targetId: row.id }, 'monitor is unmonitored: none of its regions is enabled');
          this.remove(key);
          continue;
        }
        seen.add(key);
        this.upsert(key, monitor);
      }
      this.arm();
    }
    if (complete) for (const [key, job] of this.jobs) if (!seen.has(key) && job.readAt < started) this.remove(key);
  }

  private upsert(key: string, monitor: Monitor): void {
    const current = this.jobs.get(key);
    if (current && current.monitor.intervalMs === monitor.intervalMs) {
      current.monitor = monitor;
      current.throttleKey = throttleKeyOf(monitor);
      current.readAt = performance.now();
      return;
    }
    const phase = phaseMs(monitor.id, this.o.region, monitor.intervalMs);
    const job: Job = {
      monitor, shard: shardOf(monitor.id), gen: ++this.gen, phase, due: nextSlotMs(Date.now(), monitor.intervalMs, phase), throttleKey: throttleKeyOf(monitor),
      readAt: performance.now(),
    };
    this.remove(key);
    this.checksPerSec += 1000 / monitor.intervalMs;
    this.jobs.set(key, job);
    this.heap.push({ due: job.due, key, gen: job.gen });
  }

  private remove(key: string): void {
    const job = this.jobs.get(key);
    if (!job) return;
    this.checksPerSec = Math.max(0, this.checksPerSec - 1000 / job.monitor.intervalMs);
    this.jobs.delete(key);
  }

  private arm(): void {
    if (this.stopped) return;
    const top = this.heap.peek();
    const quantum = dispatchQuantumMs(this.checksPerSec);
    const at = Math.min(top ? Math.ceil(top.due / quantum) * quantum : Infinity, Date.now() + MAX_SLEEP_MS);
    if (this.timer && at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - Date.now()));
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    for (let top = this.heap.peek(); top && top.due <= now; top = this.heap.peek()) {
      this.heap.pop();
      const job = this.jobs.get(top.key);
      if (!job || job.gen !== top.gen) continue;
      let dropped = false;
      if (this.leases.runs(job.shard)) dropped = !this.dispatch(job, now);
      else if (this.leases.lapsed()) this.missedForLease();
      if (dropped) job.phase = movedPhaseMs(job.phase, job.monitor.intervalMs);
      let next = dropped ? nextSlotMs(now + 1, job.monitor.intervalMs, job.phase) : job.due + job.monitor.intervalMs;
      if (next <= now) {
        this.skipped.inc(Math.floor((now - job.due) / job.monitor.intervalMs));
        next = nextSlotMs(now + 1, job.monitor.intervalMs, job.phase);
      }
      job.due = next;
      // The popped entry goes back with its new time: no allocation a check.
      top.due = next;
      this.heap.push(top);
    }
    this.arm();
  }

  /** Starts the job's check; false when the per-host throttle drops the tick instead. */
  private dispatch(job: Job, now: number): boolean {
    const { monitor, throttleKey } = job;
    if (throttleKey !== null && !this.throttle.acquire(throttleKey)) {
      this.throttled.inc();
      return false;
    }
    this.ran.inc();
    this.lag.observe((now - job.due) / 1000);
    const run = (monitor.restated ? this.restate(monitor) : this.runCheck(monitor, now)).finally(() => {
      if (throttleKey !== null) this.throttle.release(throttleKey);
      this.inflight.delete(run);
    });
    this.inflight.add(run);
    return true;
  }

  private async restate(monitor: Monitor): Promise<void> {
    try {
      await this.o.restate(monitor);
    } catch (err) {
      // Nothing to record when the store fails; the next slot restates the state again.
      this.o.log.warn({ err, targetId: monitor.id }, 'scheduler: restating a manual state failed');
    }
  }

  private async runCheck(monitor: Monitor, startedMs: number): Promise<void> {
    let result: ProbeResult;
    try {
      const variables = monitor.spec && monitor.variableRefs.length ? await this.o.variables(monitor.orgId) : NO_VARIABLES;
      const runnable = runnableSpec(monitor.spec, monitor.variableRefs, variables);
      result = 'spec' in runnable ? await this.o.execute(monitor, runnable.spec, this.abort.signal, runnable.secretParts) : runnable.unrunnable;
    } catch (err) {
      // A probe reports target failures as results; a throw is our bug, recorded rather than lost.
      this.o.log.error({ err, targetId: monitor.id }, 'probe threw');
      result = { status: 'error', duration_ms: Date.now() - startedMs, error: `internal error: ${(err as Error).message}` };
    }
    if (this.abort.signal.aborted) return;
    // Spelled out, not spread: every record then has one shape, which the writer's loops over a batch prefer.
    this.o.sink.push({
      status: result.status, duration_ms: result.duration_ms, error: result.error, timings: result.timings, fields: result.fields,
      targetId: monitor.id, orgId: monitor.orgId, region: this.o.region, checkedAt: new Date(startedMs), staleAfterMs: staleAfterMsOf(monitor.intervalMs),
    });
  }
}
