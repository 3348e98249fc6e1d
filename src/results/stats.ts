// Uptime and latency of one monitor over a range. A short recent range is read from raw results
// (exact edges, fine buckets); a longer one from the hourly rollups, and beyond those from the
// daily ones (with the hourly rows not yet moved into days), its edges widened to whole buckets.
// Either way the figures come from one rule (src/results/rollup.ts), and what no rollup holds yet
// (the results the folder has not reached, and the stretch since the latest) is added as it stands.
import type { Executor } from '../db/db.js';
import type { EffectivePlan } from '../plans/service.js';
import type { Clock } from '../shared/context.js';
import { getTargetRowInOrg } from '../targets/service.js';
import { quantile } from './histogram.js';
import { accumulate, Buckets, chargeDowntime, emptyAggregate, mergeAggregates, PHASES, STATUSES, uptimePct, type Aggregate, type Clip } from './rollup.js';
import { DAY_MS, HOUR_MS, HOURLY_KEEP_DAYS, readDeclaredDowntime, readRawObservations, readRollups, readUnfolded, type Granularity } from './rollup-store.js';
import { NO_PROBE_REGION } from './types.js';
import { oldestReadable, resultWindow } from './service.js';
import type { LatencyStatsT, StatsQueryT } from './stats-schema.js';

export interface StatsCtx { db: Executor; clock: Clock; orgId: string; plan: EffectivePlan }

/** A range with no `from` looks back this far. */
const DEFAULT_SPAN_MS = DAY_MS;
const MINUTE_MS = 60_000;

export type Resolution = 'raw' | Granularity;

export interface Plan { resolution: Resolution; bucketMs: number; from: number; to: number }

/**
 * Where a range is read from and the width of its series buckets: about 50 to 200 points. Raw
 * results answer ranges up to two days that lie inside `raw_days`; rollup ranges are widened to
 * whole buckets, but never to before `oldest` (what `retention_days` keeps readable: a first
 * bucket that would reach past it is left out) nor past `now` (the range then ends inside its
 * last bucket).
 */
export function planRange(from: number, to: number, now: number, rawDays: number, oldest = 0): Plan {
  const span = to - from;
  if (span <= 2 * DAY_MS && from >= now - rawDays * DAY_MS) {
    const bucketMs = span <= 2 * HOUR_MS ? MINUTE_MS : span <= 12 * HOUR_MS ? 5 * MINUTE_MS : 15 * MINUTE_MS;
    return { resolution: 'raw', bucketMs, from, to };
  }
  const widen = (bucketMs: number, resolution: Resolution): Plan => {
    const floor = Math.floor(from / bucketMs) * bucketMs;
    const start = floor >= oldest ? floor : Math.ceil(oldest / bucketMs) * bucketMs;
    return { resolution, bucketMs, from: start, to: Math.max(start, Math.min(Math.ceil(to / bucketMs) * bucketMs, Math.max(to, now))) };
  };
  if (span <= 31 * DAY_MS && from >= now - HOURLY_KEEP_DAYS * DAY_MS) return widen(span <= 7 * DAY_MS ? HOUR_MS : 6 * HOUR_MS, 'hour');
  return widen(DAY_MS, 'day');
}

/**
 * Per region: the range's buckets of width `plan.bucketMs`, the open stretch since the latest result
 * included. A raw read leaves the time inside `declared` out (the caller charges it as down).
 */
async function bucketsByRegion(db: Executor, targetId: string, plan: Plan, now: number, region: string | undefined, declared: readonly Clip[]): Promise<Map<string, Buckets>> {
  const byRegion = new Map<string, Buckets>();
  const bucketsOf = (r: string): Buckets => {
    let b = byRegion.get(r);
    if (!b) byRegion.set(r, b = new Buckets(plan.bucketMs));
    return b;
  };
  const clip = { from: plan.from, to: Math.min(plan.to, now) };
  if (plan.resolution === 'raw') {
    const rows = await readRawObservations(db, targetId, new Date(plan.from), new Date(clip.to), region);
    const grouped = new Map<string, typeof rows[number]['observation'][]>();
    for (const row of rows) {
      const list = grouped.get(row.region);
      if (list) list.push(row.observation);
      else grouped.set(row.region, [row.observation]);
    }
    for (const [r, observations] of grouped) accumulate(bucketsOf(r), null, observations, clip, declared);
    return byRegion;
  }
  const [rollups, unfolded] = await Promise.all([
    readRollups(db, { targetId, granularity: plan.resolution, from: new Date(plan.from), to: new Date(plan.to), ...(region !== undefined && { region }) }),
    readUnfolded(db, targetId, region),
  ]);
  for (const { region: r, start, agg } of rollups) {
    const buckets = bucketsOf(r);
    const at = buckets.startOf(start);
    buckets.byStart.set(at, mergeAggregates(buckets.byStart.get(at) ?? emptyAggregate(), agg));
  }
  // The results after the latest folded one, and the stretch since the latest, are in no rollup yet.
  for (const { region: r, cursor, observations } of unfolded) accumulate(bucketsOf(r), cursor, observations, clip);
  return byRegion;
}

function total(buckets: Iterable<Aggregate>): Aggregate {
  let sum = emptyAggregate();
  for (const agg of buckets) sum = mergeAggregates(sum, agg);
  return sum;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

export function latencyStats(agg: Aggregate): LatencyStatsT {
  const l = agg.latency;
  const q = (p: number): number | null => {
    const v = quantile(l.hist, p, l.min, l.max);
    return v === null ? null : round2(v);
  };
  return {
    count: l.count,
    mean_ms: l.count ? round2(l.sum / l.count) : null,
    min_ms: l.count ? round2(l.min) : null,
    max_ms: l.count ? round2(l.max) : null,
    p50_ms: q(0.5), p90_ms: q(0.9), p95_ms: q(0.95), p99_ms: q(0.99),
    phases: Object.fromEntries(PHASES.map((p) => {
      const { sum, count } = agg.phases[p];
      return [`${p}_ms`, count ? round2(sum / count) : null];
    })) as LatencyStatsT['phases'],
  };
}

function series(buckets: Buckets, plan: Plan) {
  const points: Array<{ at: string } & LatencyStatsT> = [];
  // An empty range holds no bucket, even where its instant falls inside one.
  if (plan.to <= plan.from) return points;
  for (let at = Math.floor(plan.from / plan.bucketMs) * plan.bucketMs; at < plan.to; at += plan.bucketMs) {
    points.push({ at: new Date(at).toISOString(), ...latencyStats(buckets.byStart.get(at) ?? emptyAggregate()) });
  }
  return points;
}

/** The range read; with `withDeclared` (uptime), the declared downtime inside it too. */
async function prepare(ctx: StatsCtx, targetId: string, query: StatsQueryT, withDeclared = false) {
  await getTargetRowInOrg(ctx.db, ctx.orgId, targetId);
  const now = ctx.clock.now().getTime();
  const window = resultWindow(ctx.clock, ctx.plan, query, { defaultSpanMs: DEFAULT_SPAN_MS, endAtNow: true });
  const plan = planRange(window.from.getTime(), window.to.getTime(), now, ctx.plan.caps.raw_days ?? Infinity, oldestReadable(ctx.clock, ctx.plan));
  const clip = { from: plan.from, to: Math.min(plan.to, now) };
  const declared = withDeclared ? await readDeclaredDowntime(ctx.db, targetId, clip) : [];
  const byRegion = await bucketsByRegion(ctx.db, targetId, plan, now, query.region, plan.resolution === 'raw' ? declared : []);
  const head = {
    target_id: targetId, from: new Date(plan.from).toISOString(), to: new Date(plan.to).toISOString(), resolution: plan.resolution,
  };
  return { plan, byRegion, head, clip, declared };
}

export async function getUptime(ctx: StatsCtx, targetId: string, query: StatsQueryT) {
  const { plan, byRegion, head, clip, declared } = await prepare(ctx, targetId, query, true);
  if (declared.length) {
    // Declared downtime counts once in every region's time (once alone when none reported and no
    // region was asked for: a region that reported nothing stays unprobed, null): exactly on a raw
    // read, whose stretches left it out; shared evenly within a rollup's bucket otherwise.
    if (!byRegion.size && query.region === undefined) byRegion.set(NO_PROBE_REGION, new Buckets(plan.bucketMs));
    for (const buckets of byRegion.values()) {
      if (plan.resolution === 'raw') for (const span of declared) buckets.addTime('down', span.from, span.to);
      else chargeDowntime(buckets, declared, clip);
    }
  }
  const sum = total([...byRegion.values()].flatMap((b) => [...b.byStart.values()]));
  const secs = (ms: number): number => Math.round(ms) / 1000;
  return {
    ...head, region: query.region ?? null,
    uptime_pct: uptimePct(sum),
    up_secs: secs(sum.ms.up), degraded_secs: secs(sum.ms.degraded), down_secs: secs(sum.ms.down), error_secs: secs(sum.ms.error),
    checks: { total: STATUSES.reduce((n, s) => n + sum.checks[s], 0), ...sum.checks },
  };
}

export async function getLatency(ctx: StatsCtx, targetId: string, query: StatsQueryT) {
  const { plan, byRegion, head } = await prepare(ctx, targetId, query);
  const all = new Buckets(plan.bucketMs);
  for (const buckets of byRegion.values()) {
    for (const [at, agg] of buckets.byStart) all.byStart.set(at, mergeAggregates(all.byStart.get(at) ?? emptyAggregate(), agg));
  }
  return {
    ...head, region: query.region ?? null, bucket_secs: plan.bucketMs / 1000,
    summary: latencyStats(total(all.byStart.values())), series: series(all, plan),
  };
}

export async function getLatencyByRegion(ctx: StatsCtx, targetId: string, query: StatsQueryT) {
  const { region: _ignored, ...pooled } = query;
  const { plan, byRegion, head } = await prepare(ctx, targetId, pooled);
  return {
    ...head, bucket_secs: plan.bucketMs / 1000,
    regions: [...byRegion.keys()].sort().map((region) => {
      const buckets = byRegion.get(region)!;
      return { region, summary: latencyStats(total(buckets.byStart.values())), series: series(buckets, plan) };
    }),
  };
}
