// An acknowledged write survives `kill -9` of the server (DESIGN.md: "no acknowledged write lost").
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openPglite, openPostgres, type Db } from '../../src/db/db.js';
import { createChildStore, startChildServer, type ChildServer, type ChildStore } from './child-server.js';

describe('durability: an acknowledged write survives SIGKILL', () => {
  let store: ChildStore | undefined;
  let server: ChildServer | undefined;
  after(async () => {
    await server?.kill();
    await store?.drop();
  });

  it('keeps the user created just before the kill', async () => {
    store = await createChildStore();
    server = await startChildServer(store, { KEEPWATCH_OPERATOR__SECRET: 'x' });
    const email = `durable-${Date.now()}@example.test`;
    const res = await fetch(`${server.base}/operator/users`, {
      method: 'POST',
      headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
      body: JSON.stringify({ email, org_name: 'Durable' }),
    });
    assert.equal(res.status, 201);
    const created = (await res.json()) as { user_id: string; org_id: string };
    await server.kill('SIGKILL');
    assert.equal(server.child.signalCode, 'SIGKILL');

    const db: Db = store.databaseUrl ? openPostgres(store.databaseUrl, { max: 1 }) : await openPglite({ dataDir: join(store.dataDir, 'pg') });
    try {
      const users = await db.query<{ id: string; email: string }>('SELECT id, email FROM users WHERE id = $1', [created.user_id]);
      assert.deepEqual(users, [{ id: created.user_id, email }]);
      const orgs = await db.query<{ slug: string }>('SELECT slug FROM orgs WHERE id = $1', [created.org_id]);
      assert.deepEqual(orgs, [{ slug: 'durable' }]);
    } finally {
      await db.close();
    }
  });
});
