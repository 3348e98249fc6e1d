// Which shards this node schedules. Each node renews its leases every `renewMs`; a lease lives
// `ttlMs` on the store's clock. A node runs a shard only while its own lease is surely valid: until
// (start of the renewing statement) + ttl - renewMs by its own monotonic clock, so two nodes never
// run one shard at once whatever their wall clocks say. Shares are even: ceil(shards / live nodes).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from '../db/db.js';
import { SHARD_COUNT } from './slots.js';

export interface LeaseOptions { ttlMs: number; renewMs: number }

export interface LeaseChange { gained: number[]; lost: number[] }

export class ShardLeases {
  readonly nodeId = randomUUID();
  private held = new Set<number>();
  private validUntil = 0;

  constructor(private readonly db: Db, private readonly options: LeaseOptions) {}

  /** Whether this node may run a monitor of `shard` now. */
  runs(shard: number): boolean {
    return this.held.has(shard) && performance.now() < this.validUntil;
  }

  /** Whether this node holds shards but may not run them: its last renewal is past its safe end. */
  lapsed(): boolean {
    return this.held.size > 0 && performance.now() >= this.validUntil;
  }

  owned(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  /** One round: heartbeat, renew, give back beyond the share, take free shards up to it. */
  async renew(): Promise<LeaseChange> {
    const { ttlMs, renewMs } = this.options;
    const before = new Set(this.held);
    const ttl = `${ttlMs} milliseconds`;
    // A statement answered past the margin renews nothing the node may use; one on a connection gone
    // silent would otherwise hold every later round behind it for the store's whole deadline.
    const inMargin = { timeoutMs: ttlMs - renewMs };
    await this.db.query(
      `INSERT INTO scheduler_nodes (node_id, seen_at) VALUES ($1, now())
       ON CONFLICT (node_id) DO UPDATE SET seen_at = now()`, [this.nodeId], inMargin);
    const [live] = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM scheduler_nodes WHERE seen_at > now() - $1::interval', [ttl], inMargin);
    const share = Math.ceil(SHARD_COUNT / Math.max(1, live?.n ?? 1));
    // The safe end counts from here: the queries before this one renew nothing, and a slow store
    // stretching them would otherwise use up the margin, leaving the node running nothing.
    const renewing = performance.now();
    const renewed = await this.db.query<{ shard: number }>(
      `UPDATE scheduler_leases SET lease_until = now() + $2::interval
        WHERE node_id = $1 AND lease_until > now() RETURNING shard`, [this.nodeId, ttl], inMargin);
    let mine = renewed.map((r) => r.shard).sort((a, b) => a - b);
    if (mine.length > share) {
      const extra = mine.slice(share);
      mine = mine.slice(0, share);
      // Stop running them before anyone else may take them.
      this.held = new Set(mine);
      await this.db.query(
        `UPDATE scheduler_leases SET node_id = NULL, lease_until = '-infinity' WHERE node_id = $1 AND shard = ANY($2::smallint[])`,
        [this.nodeId, extra], inMargin);
    } else if (mine.length < share) {
      const taken = await this.db.query<{ shard: number }>(
        `UPDATE scheduler_leases SET node_id = $1, lease_until = now() + $3::interval
          WHERE shard IN (SELECT shard FROM scheduler_leases WHERE lease_until <= now() ORDER BY shard LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING shard`, [this.nodeId, share - mine.length, ttl], inMargin);
      mine = [...mine, ...taken.map((r) => r.shard)];
    }
    this.held = new Set(mine);
    this.validUntil = renewing + ttlMs - renewMs;
    return { gained: mine.filter((s) => !before.has(s)), lost: [...before].filter((s) => !this.held.has(s)) };
  }

  /** Gives every shard back at once (graceful stop) and forgets nodes long gone. */
  async release(): Promise<void> {
    this.held = new Set();
    this.validUntil = 0;
    await this.db.query(`UPDATE scheduler_leases SET node_id = NULL, lease_until = '-infinity' WHERE node_id = $1`, [this.nodeId]);
    await this.db.query('DELETE FROM scheduler_nodes WHERE node_id = $1 OR seen_at < now() - interval \'1 day\'', [this.nodeId]);
  }
}
