// Latency histograms: log-scale buckets, sixteen per doubling, so a quantile read back is within
// about 2.2% of the true value whatever the range (0.5 ms to minutes). Stored sparse: the index of
// the first bucket and the counts from there, which for one monitor's hour is a few dozen numbers.
// Histograms add bucket by bucket, so hours merge into days and days into any range.

const BUCKETS_PER_DOUBLING = 16;
/** Bucket 0 holds everything under 1 ms; bucket i >= 1 spans [2^((i-1)/16), 2^(i/16)) ms. */
const MAX_BUCKET = BUCKETS_PER_DOUBLING * 22; // 2^22 ms is over an hour: nothing lasts longer

export interface Histogram {
  /** Index of `counts[0]`. */
  lo: number;
  counts: number[];
}

export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(MAX_BUCKET, 1 + Math.floor(Math.log2(ms) * BUCKETS_PER_DOUBLING));
}

/** The value a bucket stands for: its geometric middle (0 for the sub-millisecond bucket). */
export function bucketValue(bucket: number): number {
  if (bucket <= 0) return 0;
  return 2 ** ((bucket - 0.5) / BUCKETS_PER_DOUBLING);
}

/** `h` with one more value; `h` is changed and returned. */
export function record(h: Histogram, ms: number): Histogram {
  const bucket = bucketOf(ms);
  if (!h.counts.length) {
    h.lo = bucket;
    h.counts.push(1);
    return h;
  }
  if (bucket < h.lo) {
    h.counts.unshift(...new Array<number>(h.lo - bucket).fill(0));
    h.lo = bucket;
  }
  const at = bucket - h.lo;
  while (h.counts.length <= at) h.counts.push(0);
  h.counts[at]! += 1;
  return h;
}

/** A new histogram holding both. */
export function merge(a: Histogram, b: Histogram): Histogram {
  if (!a.counts.length) return { lo: b.lo, counts: [...b.counts] };
  if (!b.counts.length) return { lo: a.lo, counts: [...a.counts] };
  const lo = Math.min(a.lo, b.lo);
  const hi = Math.max(a.lo + a.counts.length, b.lo + b.counts.length);
  const counts = new Array<number>(hi - lo).fill(0);
  a.counts.forEach((n, i) => { counts[a.lo - lo + i]! += n; });
  b.counts.forEach((n, i) => { counts[b.lo - lo + i]! += n; });
  return { lo, counts };
}

/**
 * The value at quantile `q` (0..1): the middle of the bucket holding the q-th value, held inside
 * the observed `[min, max]` so a narrow spread does not read back wider than it was; the first and
 * last values are `min` and `max` themselves.
 */
export function quantile(h: Histogram, q: number, min: number, max: number): number | null {
  const total = h.counts.reduce((sum, n) => sum + n, 0);
  if (!total) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  // The extremes are known exactly.
  if (rank === 1) return min;
  if (rank >= total) return max;
  let seen = 0;
  for (let i = 0; i < h.counts.length; i++) {
    seen += h.counts[i]!;
    if (seen >= rank) return Math.min(max, Math.max(min, bucketValue(h.lo + i)));
  }
  return max;
}

/** PostgreSQL array literal with its lower bound (`[lo:hi]={...}`), 1-based as PostgreSQL wants. */
export function toSqlArray(h: Histogram): string | null {
  if (!h.counts.length) return null;
  return `[${h.lo + 1}:${h.lo + h.counts.length}]={${h.counts.join(',')}}`;
}

/** From `array_lower(hist, 1)` and `array_to_string(hist, ',')`. */
export function fromSql(lower: number | null, csv: string | null): Histogram {
  if (lower === null || !csv) return { lo: 0, counts: [] };
  return { lo: lower - 1, counts: csv.split(',').map(Number) };
}
