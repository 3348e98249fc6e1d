// The pure rules behind uptime and latency: histogram accuracy and merging, time attribution
// (stretches, the stale cap, bucket edges, late results) and where a range is read from.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bucketOf, fromSql, merge, quantile, record, toSqlArray, type Histogram } from '../../src/results/histogram.js';
import { accumulate, Buckets, uptimePct, type Observation } from '../../src/results/rollup.js';
import { DAY_MS, HOUR_MS } from '../../src/results/rollup-store.js';
import { planRange } from '../../src/results/stats.js';

const histogramOf = (values: number[]): Histogram => values.reduce((h, v) => record(h, v), { lo: 0, counts: [] } as Histogram);

const exactQuantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
};

describe('latency histogram', () => {
  it('reads quantiles back within 2.2% of the exact value, inside [min, max]', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 1, max: 600_000, noNaN: true }), { minLength: 1, maxLength: 300 }), fc.constantFrom(0.5, 0.9, 0.95, 0.99), (values, q) => {
      const min = Math.min(...values);
      const max = Math.max(...values);
      const got = quantile(histogramOf(values), q, min, max)!;
      const exact = exactQuantile(values, q);
      assert.ok(Math.abs(got - exact) / exact <= 0.022, `q${q}: ${got} vs ${exact}`);
      assert.ok(got >= min && got <= max);
    }));
  });

  it('puts sub-millisecond values in bucket 0 and grows both ways when recording', () => {
    assert.equal(bucketOf(0), 0);
    assert.equal(bucketOf(0.7), 0);
    assert.equal(bucketOf(1), 1);
    assert.equal(bucketOf(2), 17);
    const h = histogramOf([100, 5, 1000]);
    assert.equal(h.lo, bucketOf(5));
    assert.equal(h.counts.reduce((a, b) => a + b), 3);
    assert.equal(h.counts.length, bucketOf(1000) - bucketOf(5) + 1);
  });

  it('merges bucket by bucket, whatever the overlap', () => {
    const a = histogramOf([3, 4, 50]);
    const b = histogramOf([40, 900, 900]);
    assert.deepEqual(merge(a, b), histogramOf([3, 4, 50, 40, 900, 900]));
    assert.deepEqual(merge({ lo: 0, counts: [] }, b), b);
  });

  it('round-trips through the PostgreSQL array literal with its lower bound', () => {
    const h = histogramOf([12, 13, 400]);
    const literal = toSqlArray(h)!;
    assert.match(literal, /^\[\d+:\d+\]=\{[\d,]+\}$/);
    const [, lower, , csv] = /^\[(\d+):(\d+)\]=\{(.*)\}$/.exec(literal)!;
    assert.deepEqual(fromSql(Number(lower), csv!), h);
    assert.equal(toSqlArray({ lo: 0, counts: [] }), null);
  });
});

const T0 = Date.UTC(2026, 10, 23, 9, 59, 0);
const obs = (at: number, status: Observation['status'], durationMs = 10, staleAfterMs: number | null = 180_000): Observation =>
  ({ at, status, durationMs, measured: true, staleAfterMs });

describe('time attribution', () => {
  it('credits each stretch to the earlier status, split at bucket edges, and leaves the last open', () => {
    const buckets = new Buckets(HOUR_MS);
    const cursor = accumulate(buckets, null, [obs(T0, 'up'), obs(T0 + 120_000, 'down'), obs(T0 + 150_000, 'up')]);
    assert.deepEqual(cursor, { at: T0 + 150_000, status: 'up', staleAfterMs: 180_000 });
    const nine = buckets.byStart.get(Date.UTC(2026, 10, 23, 9))!;
    const ten = buckets.byStart.get(Date.UTC(2026, 10, 23, 10))!;
    assert.deepEqual([nine.ms.up, nine.ms.down], [60_000, 0]);
    assert.deepEqual([ten.ms.up, ten.ms.down], [60_000, 30_000]);
    assert.deepEqual([nine.checks.up, ten.checks.down, ten.checks.up], [1, 1, 1]);
  });

  it('counts a silence longer than the stale cap as no data; a state without a cap stands until changed', () => {
    const capped = new Buckets(DAY_MS);
    accumulate(capped, null, [obs(T0, 'down'), obs(T0 + HOUR_MS, 'up')]);
    assert.equal([...capped.byStart.values()].reduce((n, a) => n + a.ms.down, 0), 180_000);
    const standing = new Buckets(DAY_MS);
    accumulate(standing, null, [obs(T0, 'down', 0, null), obs(T0 + HOUR_MS, 'up', 0, null)]);
    assert.equal([...standing.byStart.values()].reduce((n, a) => n + a.ms.down, 0), HOUR_MS);
  });

  it('counts a late result as a check without moving time or the cursor', () => {
    const buckets = new Buckets(DAY_MS);
    const cursor = accumulate(buckets, { at: T0 + 60_000, status: 'up', staleAfterMs: 180_000 }, [obs(T0, 'down'), obs(T0 + 90_000, 'up')]);
    const day = [...buckets.byStart.values()][0]!;
    assert.equal(day.checks.down, 1);
    assert.equal(day.ms.down, 0);
    assert.equal(day.ms.up, 30_000);
    assert.equal(cursor!.at, T0 + 90_000);
  });

  it('clips to a range and runs the last stretch to its end (a raw read)', () => {
    const buckets = new Buckets(DAY_MS);
    accumulate(buckets, null, [obs(T0 - 60_000, 'down'), obs(T0 + 60_000, 'up')], { from: T0, to: T0 + 120_000 });
    const day = [...buckets.byStart.values()][0]!;
    assert.deepEqual([day.ms.down, day.ms.up, day.checks.down, day.checks.up], [60_000, 60_000, 0, 1]);
    assert.equal(uptimePct(day), 50);
  });

  it('keeps error time out of uptime and latency to answered probe results', () => {
    const buckets = new Buckets(DAY_MS);
    accumulate(buckets, null, [obs(T0, 'error', 5000), obs(T0 + 60_000, 'up', 20), obs(T0 + 120_000, 'down', 9000), obs(T0 + 180_000, 'degraded', 40),
      { ...obs(T0 + 240_000, 'up', 0), measured: false }], { from: T0, to: T0 + 300_000 });
    const day = [...buckets.byStart.values()][0]!;
    assert.equal(uptimePct(day), 75);
    assert.deepEqual([day.latency.count, day.latency.min, day.latency.max], [2, 20, 40]);
    assert.equal(uptimePct(new Buckets(DAY_MS).at(T0)), null);
  });
});

describe('where a range is read from', () => {
  const now = Date.UTC(2026, 10, 23, 12);
  it('reads short recent ranges raw, with buckets from the span', () => {
    assert.deepEqual(planRange(now - HOUR_MS, now, now, 30), { resolution: 'raw', bucketMs: 60_000, from: now - HOUR_MS, to: now });
    assert.equal(planRange(now - 6 * HOUR_MS, now, now, 30).bucketMs, 300_000);
    assert.equal(planRange(now - 2 * DAY_MS, now, now, 30).bucketMs, 900_000);
  });

  it('reads longer or older ranges from rollups, widened to whole buckets', () => {
    const hourly = planRange(now - 3 * DAY_MS - 1000, now - 1000, now, 30);
    assert.deepEqual(hourly, { resolution: 'hour', bucketMs: HOUR_MS, from: now - 3 * DAY_MS - HOUR_MS, to: now });
    assert.equal(planRange(now - 20 * DAY_MS, now, now, 30).bucketMs, 6 * HOUR_MS);
    assert.equal(planRange(now - 40 * DAY_MS, now - 39 * DAY_MS, now, 30).resolution, 'day');
    assert.equal(planRange(now - 31 * DAY_MS, now - 30 * DAY_MS, now, 30).resolution, 'hour');
    assert.equal(planRange(now - 90 * DAY_MS, now, now, 30).resolution, 'day');
  });

  it('never ends a widened range past now: it ends inside its last bucket', () => {
    const at = now + 13 * 60_000 + 5_000; // 12:13:05, inside an hour, a six-hour bucket and a day
    assert.deepEqual(planRange(at - 3 * DAY_MS, at, at, 30), { resolution: 'hour', bucketMs: HOUR_MS, from: now - 3 * DAY_MS, to: at });
    const sixHourly = planRange(at - 20 * DAY_MS, at, at, 30);
    assert.deepEqual([sixHourly.bucketMs, sixHourly.from, sixHourly.to], [6 * HOUR_MS, now - 20 * DAY_MS, at]);
    const daily = planRange(at - 90 * DAY_MS, at, at, 30);
    assert.deepEqual([daily.resolution, daily.from, daily.to], ['day', Date.UTC(2026, 7, 25), at]);
    // A range that ended in the past still ends at its bucket's end.
    assert.equal(planRange(at - 40 * DAY_MS, at - 39 * DAY_MS, at, 30).to, Date.UTC(2026, 9, 16));
  });
});
