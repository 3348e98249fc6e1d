// The result writer: batches land in one statement with every column; a result for a monitor
// deleted meanwhile is dropped without losing the rest of its batch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, httpTarget, type Api } from '../targets/helpers.js';

describe('result writer', () => {
  let t: TestApp;
  let api: Api;
  let orgId: string;
  before(async () => {
    t = await startTestApp();
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    orgId = tenant.orgId;
  });
  after(async () => { await t.close(); });

  it('writes pushed results with timings and fields, and drops those of deleted monitors', async () => {
    const kept = (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
    const gone = (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
    assert.equal((await api('DELETE', `/api/v1/targets/${gone}`)).statusCode, 204);
    const checkedAt = new Date('2026-11-23T10:00:00.123Z');
    t.services.results.push({
      targetId: kept, orgId, region: 'local', checkedAt, status: 'degraded', duration_ms: 12.6, error: 'rate-limited 429',
      timings: { dns: 1, connect: 2 }, fields: { status_code: 429 },
    });
    t.services.results.push({ targetId: gone, orgId, region: 'local', checkedAt, status: 'up', duration_ms: 3, error: null });
    t.services.results.push({ targetId: newId(), orgId, region: 'local', checkedAt, status: 'down', duration_ms: 3, error: 'x' });
    await t.services.results.flush();
    const rows = await t.services.db.query<Record<string, unknown>>(
      `SELECT target_id, region, checked_at, status, duration_ms, error, dns_ms, connect_ms, tls_ms, first_byte_ms, transfer_ms, fields
         FROM check_results WHERE org_id = $1`, [orgId]);
    assert.deepEqual(rows, [{
      target_id: kept, region: 'local', checked_at: checkedAt, status: 'degraded', duration_ms: 13, error: 'rate-limited 429',
      dns_ms: 1, connect_ms: 2, tls_ms: null, first_byte_ms: null, transfer_ms: null, fields: { status_code: 429 },
    }]);
  });
});
