// The durability check of `npm run bench:pings`: after the server was SIGKILLed mid-load, open its
// store as a restarted server would (PGlite: the data dir it left; PostgreSQL: the scratch database)
// and hold it to every 200 the load generator received. An acknowledged ping's effect is one
// `heartbeat_pings` row and the heartbeat's last ping moved (its row's `last_ping_at`, or on PGlite a
// routine success logged since the row was written); rows beyond the acks are pings that were
// committed while their answer was lost with the process, which is allowed.
import { join } from 'node:path';
import { openPglite, openPostgres, type Db } from '../src/db/db.js';
import { LOGGED_SUCCESS_SQL } from '../src/heartbeat/store.js';

export interface Durability {
  acked: number;
  /** Rows of the bench's targets in heartbeat_pings. */
  stored: number;
  /** Acknowledged pings with no row: sum over targets of max(0, acks − rows). Must be 0. */
  missing: number;
  /** Targets with fewer rows than acks. */
  targetsShort: number;
  /** Targets whose last_ping_at is null or earlier than the start of their last acknowledged ping. */
  lastPingBehind: number;
  /** Targets of the bench absent from the store altogether. */
  targetsAbsent: number;
}

export interface AckedTarget { targetId: string; acks: number; lastAckSentAt: number }

export async function verifyDurability(store: { dataDir?: string; databaseUrl?: string }, targets: readonly AckedTarget[]): Promise<Durability> {
  const db: Db = store.databaseUrl ? openPostgres(store.databaseUrl, { max: 1 }) : await openPglite({ dataDir: join(store.dataDir!, 'pg') });
  try {
    const rows = await db.query<{ target_id: string; n: number }>('SELECT target_id, count(*)::int AS n FROM heartbeat_pings GROUP BY target_id');
    const lastPing = await db.query<{ target_id: string; at: number | null }>(
      `SELECT target_id, (extract(epoch FROM greatest(last_ping_at, ${LOGGED_SUCCESS_SQL})) * 1000)::float8 AS at FROM heartbeats h`);
    const stored = new Map(rows.map((r) => [r.target_id, r.n]));
    const last = new Map(lastPing.map((r) => [r.target_id, r.at]));
    const out: Durability = { acked: 0, stored: 0, missing: 0, targetsShort: 0, lastPingBehind: 0, targetsAbsent: 0 };
    for (const t of targets) {
      const n = stored.get(t.targetId) ?? 0;
      out.acked += t.acks;
      out.stored += n;
      if (n < t.acks) {
        out.missing += t.acks - n;
        out.targetsShort++;
      }
      if (!last.has(t.targetId)) out.targetsAbsent++;
      else if (t.acks > 0) {
        const at = last.get(t.targetId);
        // Whole ms on the client against µs in the store: the send time is floored, so never late.
        if (at === null || at === undefined || at < t.lastAckSentAt) out.lastPingBehind++;
      }
    }
    return out;
  } finally {
    await db.close();
  }
}
