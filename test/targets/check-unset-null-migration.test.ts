// Migration 0024: monitors written before optional check fields were stored as null read as those
// written after it: every optional field left out is null (`expected_status` its default range),
// and nothing stored is overwritten.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openPglite } from '../../src/db/db.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { newId } from '../../src/shared/ids.js';

describe('migration 0024: optional check fields left out are null', () => {
  it('fills what each kind left out and keeps what was stored', async () => {
    const db = await openPglite();
    try {
      const all = listMigrations();
      await migrate(db, all.filter((m) => m.version < 24));
      const specs: Record<string, Record<string, unknown>> = {
        http: { type: 'http', url: 'https://example.com', body: 'kept', expected_status: { kind: 'exact', value: 204 } },
        dns: { type: 'dns', domain: 'example.com', record_type: 'A', expected_contains: '192.0.2.1' },
        heartbeat: { type: 'heartbeat', period: 60_000, grace: 0 },
        tls_cert: { type: 'tls_cert', host: 'example.com', port: 443 },
        flow: { type: 'flow', start_url: 'https://example.com', steps: [{ op: 'click', selector: '#a' }, { op: 'assert_text', contains: 'Hi' }] },
        tcp: { type: 'tcp', host: 'example.com', port: 22 },
      };
      // The rows name an org that does not exist: foreign keys are not what this checks.
      await db.exec('SET session_replication_role = replica');
      for (const [kind, spec] of Object.entries(specs)) {
        await db.query(
          `INSERT INTO targets (id, org_id, account_id, name, kind, check_spec, interval_secs, write_source) VALUES ($1, $2, $2, $3, $3, $4, 60, 'api')`,
          [newId(), newId(), kind, JSON.stringify(spec)]);
      }
      await migrate(db, all);
      const rows = await db.query<{ kind: string; check_spec: Record<string, unknown> }>('SELECT kind, check_spec FROM targets');
      const stored = Object.fromEntries(rows.map((r) => [r.kind, r.check_spec]));
      assert.deepEqual(stored.http, { ...specs.http, expected_body_contains: null, basic_auth: null, bearer_token: null });
      assert.deepEqual(stored.dns, { ...specs.dns, resolver: null, expected_records: null });
      assert.deepEqual(stored.heartbeat, { ...specs.heartbeat, max_runtime: null });
      assert.deepEqual(stored.tls_cert, { ...specs.tls_cert, server_name: null });
      assert.deepEqual(stored.flow, { ...specs.flow, steps: [{ op: 'click', selector: '#a' }, { op: 'assert_text', contains: 'Hi', selector: null }] });
      assert.deepEqual(stored.tcp, specs.tcp);

      const [fresh] = await db.query<{ check_spec: Record<string, unknown> }>(
        `UPDATE targets SET check_spec = '{"type":"http","url":"https://example.com"}' WHERE kind = 'http' RETURNING check_spec`);
      assert.equal(fresh!.check_spec.body, undefined, 'the migration fills rows once; new rows are filled by the schema');
    } finally {
      await db.close();
    }
  });
});
