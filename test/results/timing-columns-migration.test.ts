// Migration 0032: a result's phase timings move from a jsonb document into five columns, each
// phase where it was measured and null where it was not; a result without timings has none.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openPglite } from '../../src/db/db.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { newId } from '../../src/shared/ids.js';

describe('migration 0032: phase timings as columns', () => {
  it('moves every measured phase into its column', async () => {
    const db = await openPglite();
    try {
      const all = listMigrations();
      await migrate(db, all.filter((m) => m.version < 32));
      // The rows name a monitor that does not exist: since 0031 no foreign key checks it.
      const insert = (timings: object | null) => db.query(
        `INSERT INTO check_results (id, target_id, org_id, region, checked_at, status, duration_ms, timings) VALUES ($1, $2, $2, 'local', now(), 'up', 5, $3)`,
        [newId(), newId(), timings === null ? null : JSON.stringify(timings)]);
      await insert({ dns: 1.25, connect: 2.5, tls: 3.75, first_byte: 10.01, transfer: 0.33 });
      await insert({ connect: 4 });
      await insert(null);
      await migrate(db, all);
      const rows = await db.query<Record<string, number | null>>(
        'SELECT dns_ms, connect_ms, tls_ms, first_byte_ms, transfer_ms FROM check_results ORDER BY connect_ms NULLS LAST');
      assert.deepEqual(rows, [
        { dns_ms: 1.25, connect_ms: 2.5, tls_ms: 3.75, first_byte_ms: 10.01, transfer_ms: 0.33 },
        { dns_ms: null, connect_ms: 4, tls_ms: null, first_byte_ms: null, transfer_ms: null },
        { dns_ms: null, connect_ms: null, tls_ms: null, first_byte_ms: null, transfer_ms: null },
      ]);
      const columns = await db.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_name = 'check_results' AND column_name = 'timings'`);
      assert.deepEqual(columns, []);
    } finally {
      await db.close();
    }
  });
});
