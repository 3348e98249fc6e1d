// Migration 0023 (daily rollups derived from hourly ones): before it, every result went into both
// its hour and its day row; after it, a daily read adds both kinds, so each day must be held by one
// kind only. A day that began inside the last 35 days keeps its hours; an older day keeps its daily
// row; a day with only hourly rows keeps them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openPglite } from '../../src/db/db.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { newId } from '../../src/shared/ids.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

describe('migration 0023: daily rollups from hourly ones', () => {
  it('leaves every stretch in exactly one row', async () => {
    const db = await openPglite();
    try {
      const all = listMigrations();
      await migrate(db, all.filter((m) => m.version < 23));
      const target = newId();
      const dayStart = (daysAgo: number): number => Math.floor((Date.now() - daysAgo * DAY) / DAY) * DAY;
      const rows: Array<[string, number, number]> = [];
      const both = (daysAgo: number, hours: number[]): void => {
        const day = dayStart(daysAgo);
        rows.push(['day', day, hours.length]);
        for (const h of hours) rows.push(['hour', day + h * HOUR, 1]);
      };
      both(60, [3]); // a sweep that has not run since: its hour is also in the day
      both(36, [20, 23]); // begun before the 35-day edge: its first hours swept, two left
      both(10, [0, 5, 6]);
      rows.push(['hour', dayStart(50) + 2 * HOUR, 1]); // an hour with no day (cannot happen before 0023; kept)
      // The rows name a monitor that does not exist: foreign keys are not what this checks.
      await db.exec('SET session_replication_role = replica');
      for (const [granularity, start, checks] of rows) {
        await db.query(
          `INSERT INTO result_rollups (target_id, region, granularity, bucket_start, checks_up, checks_degraded, checks_down, checks_error,
             ms_up, ms_degraded, ms_down, ms_error, latency_count, latency_sum, latency_min, latency_max, latency_hist,
             dns_sum, dns_count, connect_sum, connect_count, tls_sum, tls_count, first_byte_sum, first_byte_count, transfer_sum, transfer_count)
           VALUES ($1, 'local', $2, $3, $4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)`,
          [target, granularity, new Date(start), checks]);
      }
      await migrate(db, all);

      const left = await db.query<{ granularity: string; bucket_start: Date; checks_up: number }>(
        'SELECT granularity, bucket_start, checks_up FROM result_rollups ORDER BY bucket_start, granularity');
      const at = (ms: number): string => new Date(ms).toISOString();
      assert.deepEqual(left.map((r) => [r.granularity, r.bucket_start.toISOString(), r.checks_up]), [
        ['day', at(dayStart(60)), 1],
        ['hour', at(dayStart(50) + 2 * HOUR), 1],
        ['day', at(dayStart(36)), 2],
        ['hour', at(dayStart(10)), 1],
        ['hour', at(dayStart(10) + 5 * HOUR), 1],
        ['hour', at(dayStart(10) + 6 * HOUR), 1],
      ]);
      // Each day's checks counted once, whichever kind of row holds them.
      const [sum] = await db.query<{ n: number }>('SELECT sum(checks_up)::int AS n FROM result_rollups');
      assert.equal(sum!.n, 1 + 1 + 2 + 3);
    } finally {
      await db.close();
    }
  });
});
