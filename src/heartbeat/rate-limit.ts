// The per-token ping limit (monitoring-api.md, Limits): a token bucket of 10 refilled at 1 per
// second, shared by every signal of a token. Kept in memory per node: a job pings one node at a
// time through the balancer, and N nodes at most multiply the burst by N.
import type { Clock } from '../shared/context.js';

export const PING_BURST = 10;
export const PINGS_PER_SECOND = 1;
/** Buckets kept before full ones (idle for 10 s or more) are dropped. */
const PRUNE_AT = 100_000;

interface Bucket { tokens: number; at: number }

export class PingRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock, private readonly burst = PING_BURST, private readonly perSecond = PINGS_PER_SECOND) {}

  /** Takes one ping from `key`'s bucket: 0 when admitted, else the seconds until one is. */
  take(key: string): number {
    const now = this.clock.now().getTime();
    const bucket = this.buckets.get(key);
    // A wall clock stepped back refills nothing rather than draining the bucket.
    const tokens = bucket ? Math.min(this.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * this.perSecond) : this.burst;
    if (tokens < 1) {
      if (bucket) { bucket.tokens = tokens; bucket.at = now; }
      return Math.max(1, Math.ceil((1 - tokens) / this.perSecond));
    }
    if (bucket) {
      // In place: the common ping allocates no bucket.
      bucket.tokens = tokens - 1;
      bucket.at = now;
      return 0;
    }
    if (this.buckets.size >= PRUNE_AT) this.prune(now);
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    return 0;
  }

  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }
}
