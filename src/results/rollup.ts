// The one rule that turns results into uptime and latency figures, used both when results are
// written (hourly rollups, which the history sweep later sums into daily ones) and when a short range
// is read from raw results.
//
// Time-based: the stretch between two consecutive results of a monitor in a region counts with the
// status of the earlier one, for at most that result's `staleAfterMs` (three intervals for a
// scheduled probe; a heartbeat or manual state stands until the next). A longer silence (paused,
// held, no probe) is no data. Latency counts results that got an answer (`up`, `degraded`) from a
// probe; heartbeat pings and manual states have none.
import type { PhaseTimings, ResultStatus } from '../probes/types.js';
import { merge, record as recordLatency, type Histogram } from './histogram.js';

export const STATUSES: readonly ResultStatus[] = ['up', 'degraded', 'down', 'error'];
export const PHASES = ['dns', 'connect', 'tls', 'first_byte', 'transfer'] as const satisfies readonly (keyof PhaseTimings)[];
export type Phase = (typeof PHASES)[number];

export interface Aggregate {
  checks: Record<ResultStatus, number>;
  /** Milliseconds spent in each status. */
  ms: Record<ResultStatus, number>;
  latency: { count: number; sum: number; min: number; max: number; hist: Histogram };
  phases: Record<Phase, { sum: number; count: number }>;
}

export interface Observation {
  at: number;
  status: ResultStatus;
  durationMs: number;
  timings?: PhaseTimings | null;
  /** False for results no probe measured (heartbeat pings, manual states). */
  measured: boolean;
  /** How long the status stands without a newer result; null: until the next one. */
  staleAfterMs: number | null;
}

/** The latest result of a monitor in a region: where the next stretch starts. */
export interface Cursor { at: number; status: ResultStatus; staleAfterMs: number | null }

// Spelled out rather than built from STATUSES and PHASES: the writer makes one a result.
export function emptyAggregate(): Aggregate {
  return {
    checks: { up: 0, degraded: 0, down: 0, error: 0 }, ms: { up: 0, degraded: 0, down: 0, error: 0 },
    latency: { count: 0, sum: 0, min: 0, max: 0, hist: { lo: 0, counts: [] } },
    phases: {
      dns: { sum: 0, count: 0 }, connect: { sum: 0, count: 0 }, tls: { sum: 0, count: 0 },
      first_byte: { sum: 0, count: 0 }, transfer: { sum: 0, count: 0 },
    } satisfies Record<Phase, unknown>,
  };
}

export function mergeAggregates(a: Aggregate, b: Aggregate): Aggregate {
  const out = emptyAggregate();
  for (const s of STATUSES) {
    out.checks[s] = a.checks[s] + b.checks[s];
    out.ms[s] = a.ms[s] + b.ms[s];
  }
  const [la, lb] = [a.latency, b.latency];
  out.latency = {
    count: la.count + lb.count, sum: la.sum + lb.sum,
    min: !la.count ? lb.min : !lb.count ? la.min : Math.min(la.min, lb.min),
    max: Math.max(la.max, lb.max),
    hist: merge(la.hist, lb.hist),
  };
  for (const p of PHASES) out.phases[p] = { sum: a.phases[p].sum + b.phases[p].sum, count: a.phases[p].count + b.phases[p].count };
  return out;
}

/** Buckets aligned on the Unix epoch (UTC hours and days); `bucketMs` is the width. */
export class Buckets {
  readonly byStart = new Map<number, Aggregate>();

  constructor(readonly bucketMs: number) {}

  startOf(at: number): number {
    return Math.floor(at / this.bucketMs) * this.bucketMs;
  }

  at(at: number): Aggregate {
    const start = this.startOf(at);
    let agg = this.byStart.get(start);
    if (!agg) this.byStart.set(start, agg = emptyAggregate());
    return agg;
  }

  /** Credits `[from, to)` to `status`, split where it crosses bucket edges. */
  addTime(status: ResultStatus, from: number, to: number): void {
    for (let t = from; t < to;) {
      const end = Math.min(to, this.startOf(t) + this.bucketMs);
      this.at(t).ms[status] += end - t;
      t = end;
    }
  }

  count(obs: Observation): void {
    const agg = this.at(obs.at);
    agg.checks[obs.status]++;
    if (!obs.measured || (obs.status !== 'up' && obs.status !== 'degraded')) return;
    const l = agg.latency;
    l.min = l.count ? Math.min(l.min, obs.durationMs) : obs.durationMs;
    l.max = Math.max(l.max, obs.durationMs);
    l.count++;
    l.sum += obs.durationMs;
    recordLatency(l.hist, obs.durationMs);
    for (const p of PHASES) {
      const ms = obs.timings?.[p];
      if (ms === undefined) continue;
      agg.phases[p].sum += ms;
      agg.phases[p].count++;
    }
  }
}

export interface Clip { from: number; to: number }

/**
 * Adds one monitor-region's observations (sorted by time) to `buckets` after `cursor`, and returns
 * the new cursor. A result not newer than the cursor (a late batch) counts as a check but moves no
 * time. With `clip`, only what lies inside it counts, and the last stretch runs to `clip.to` (a
 * read of raw results); without, the last stretch stays open for the next write. Time inside
 * `excluded` (sorted, not overlapping) is left out: a raw read charges declared downtime there itself.
 */
export function accumulate(buckets: Buckets, cursor: Cursor | null, observations: readonly Observation[], clip?: Clip, excluded: readonly Clip[] = []): Cursor | null {
  const inside = (at: number): boolean => !clip || (at >= clip.from && at < clip.to);
  const credit = (from: Cursor, until: number): void => {
    const end = Math.min(until, from.staleAfterMs === null ? Infinity : from.at + from.staleAfterMs, clip?.to ?? Infinity);
    let start = Math.max(from.at, clip?.from ?? -Infinity);
    for (const gap of excluded) {
      if (gap.to <= start) continue;
      if (gap.from >= end) break;
      if (gap.from > start) buckets.addTime(from.status, start, gap.from);
      start = Math.max(start, gap.to);
    }
    if (end > start) buckets.addTime(from.status, start, end);
  };
  let current = cursor;
  for (const obs of observations) {
    if (inside(obs.at)) buckets.count(obs);
    if (current && obs.at <= current.at) continue;
    if (current) credit(current, obs.at);
    current = { at: obs.at, status: obs.status, staleAfterMs: obs.staleAfterMs };
  }
  if (clip && current) credit(current, clip.to);
  return current;
}

/**
 * Charges `spans` (declared incidents that count as downtime, sorted, not overlapping) to `buckets`
 * as down time, within `clip`. Rollups hold no order inside a bucket, so the overlap takes its share
 * of each status's time evenly, then all of it is down: exact for spans on bucket edges, and a
 * stretch with no data in it counts as down too. A raw read is exact instead: it leaves the spans
 * out of its stretches (`accumulate`) and adds them whole as down time.
 */
export function chargeDowntime(buckets: Buckets, spans: readonly Clip[], clip: Clip): void {
  for (const span of spans) {
    const [from, to] = [Math.max(span.from, clip.from), Math.min(span.to, clip.to)];
    for (let t = from; t < to;) {
      const start = buckets.startOf(t);
      const width = Math.min(start + buckets.bucketMs, clip.to) - Math.max(start, clip.from);
      const end = Math.min(to, start + buckets.bucketMs);
      const agg = buckets.at(t);
      const share = Math.min(1, (end - t) / width);
      for (const s of STATUSES) agg.ms[s] -= agg.ms[s] * share;
      agg.ms.down += end - t;
      t = end;
    }
  }
}

/** Uptime of an aggregate: time up or degraded over time with a verdict; error time is no verdict. */
export function uptimePct(agg: Aggregate): number | null {
  const measured = agg.ms.up + agg.ms.degraded + agg.ms.down;
  if (!measured) return null;
  return Math.round(((agg.ms.up + agg.ms.degraded) / measured) * 100 * 1000) / 1000;
}
