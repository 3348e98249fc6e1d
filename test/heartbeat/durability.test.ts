// Pings over a real socket against a real server process: every acknowledged ping survives kill -9
// (group commit answers after the commit), a body past 256 KiB loses its output but never the ping,
// and a POST without a content type is an ordinary ping.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openPglite, openPostgres, type Db } from '../../src/db/db.js';
import { createChildStore, startChildServer, type ChildServer, type ChildStore } from '../db/child-server.js';

/** A POST with a raw body and no content type. */
function rawPost(url: string, body: Buffer): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    // The server may answer and close before the whole body is sent.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(body);
  });
}

describe('heartbeat pings: durability and bodies on a real socket', () => {
  let store: ChildStore | undefined;
  let server: ChildServer | undefined;
  after(async () => {
    await server?.kill();
    await store?.drop();
  });

  it('every acknowledged ping is in the store after SIGKILL; an oversized body keeps the ping, not the output', async () => {
    store = await createChildStore();
    server = await startChildServer(store, { KEEPWATCH_OPERATOR__SECRET: 'x', KEEPWATCH_CHECKER__ENABLED: 'false' });
    const call = async (method: string, path: string, body?: unknown, token = 'x') => {
      const res = await fetch(`${server!.base}${path}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const user = await call('POST', '/operator/users', { email: `pings-${Date.now()}@example.test`, org_name: 'Pings' });
    const { token } = await call('POST', `/operator/users/${user.user_id}/api-tokens`, { name: 't', scopes: ['full_access'], org_id: user.org_id });
    const bulk = await call('POST', '/api/v1/targets/bulk', { targets: Array.from({ length: 40 }, (_, i) => ({ name: `job ${i}`, check: { type: 'heartbeat', period: 3_600_000, grace: 0 } })) }, token);
    const ids = (bulk.targets as Array<{ id: string }>).map((x) => x.id);
    const paths = await Promise.all(ids.map(async (id) => new URL((await call('GET', `/api/v1/targets/${id}/heartbeat`, undefined, token)).ping_url).pathname));

    const big = await rawPost(`${server.base}${paths[0]}/fail`, Buffer.alloc(300 * 1024, 'y'));
    assert.equal(big.status, 200, 'an oversized body is never refused');
    assert.equal(big.connection, 'close');
    assert.equal((await rawPost(`${server.base}${paths[1]}`, Buffer.from('done'))).status, 200);

    // Pings keep flowing while the server is killed; only the acknowledged ones are counted on.
    const acked = new Map<string, number>(ids.map((id) => [id, 0]));
    let total = 0;
    let killed = false;
    let enoughAcked!: () => void;
    const killTime = new Promise<void>((ok) => { enoughAcked = ok; });
    const loops = ids.map(async (id, i) => {
      for (let n = 0; n < 8 && !killed; n++) {
        const res = await fetch(`${server!.base}${paths[i]}/${n % 2 ? 'start' : '0'}`).catch(() => null);
        if (res?.status === 200) {
          acked.set(id, acked.get(id)! + 1);
          if (++total === 40) enoughAcked();
        }
        await res?.arrayBuffer();
      }
    });
    await Promise.race([killTime, Promise.all(loops)]);
    killed = true;
    await server.kill('SIGKILL');
    await Promise.all(loops);
    assert.ok(total >= 40, 'pings were acknowledged before the kill');

    const db: Db = store.databaseUrl ? openPostgres(store.databaseUrl, { max: 1 }) : await openPglite({ dataDir: join(store.dataDir, 'pg') });
    try {
      const rows = await db.query<{ target_id: string; n: number }>(
        `SELECT target_id, count(*)::int AS n FROM heartbeat_pings WHERE target_id = ANY($1::uuid[]) AND (exit_code IS NOT NULL OR signal = 'start') GROUP BY target_id`, [ids]);
      const stored = new Map(rows.map((r) => [r.target_id, r.n]));
      for (const [id, n] of acked) assert.ok((stored.get(id) ?? 0) >= n, `${id}: ${n} acknowledged, ${stored.get(id) ?? 0} stored`);
      const [oversized] = await db.query<{ signal: string; output: string | null }>(
        `SELECT signal, output FROM heartbeat_pings WHERE target_id = $1 AND exit_code IS NULL AND signal = 'fail'`, [ids[0]]);
      assert.deepEqual(oversized, { signal: 'fail', output: null });
      const [plain] = await db.query<{ output: string }>(`SELECT output FROM heartbeat_pings WHERE target_id = $1 AND exit_code IS NULL AND signal = 'success'`, [ids[1]]);
      assert.equal(plain!.output, 'done', 'a body without a content type is still the output');
    } finally {
      await db.close();
    }
  });
});
