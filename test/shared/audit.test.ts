// Audit rows and their actor (monitoring-api.md Events 4, "with the acting user"): a token-authenticated
// change names the token as actor and the user behind it in details, whichever writer made the row.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACTING_USER_KEY, writeAudit, writeAuditMany } from '../../src/shared/audit.js';
import type { Actor } from '../../src/shared/context.js';
import { newId } from '../../src/shared/ids.js';
import { createTestStore, type TestStore } from '../helpers/store.js';

describe('audit rows: the actor', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  const rowsOf = (entityId: string) => store.db.query<{ actor_type: string; actor_id: string | null; details: Record<string, unknown> }>(
    'SELECT actor_type, actor_id, details FROM audit_log WHERE entity_id = $1 ORDER BY id', [entityId]);
  const userId = newId();
  const tokenId = newId();
  const token: Actor = { type: 'token', userId, tokenId };

  it('a token actor is the token, with its user in details; the entry cannot name another user', async () => {
    const entityId = newId();
    await writeAudit(store.db, token, { action: 'thing.done', entityId, details: { a: 1, [ACTING_USER_KEY]: 'someone else' } });
    assert.deepEqual(await rowsOf(entityId), [{ actor_type: 'token', actor_id: tokenId, details: { a: 1, [ACTING_USER_KEY]: userId } }]);
  });

  it('writeAuditMany records the user on every row', async () => {
    const entityId = newId();
    await writeAuditMany(store.db, token, [{ action: 'thing.one', entityId, details: { n: 1 } }, { action: 'thing.two', entityId }]);
    assert.deepEqual((await rowsOf(entityId)).map((r) => r.details), [{ n: 1, [ACTING_USER_KEY]: userId }, { [ACTING_USER_KEY]: userId }]);
  });

  it('a session names its user both ways; system and operator actors have no user', async () => {
    const entityId = newId();
    await writeAudit(store.db, { type: 'session', userId, sessionId: newId() }, { action: 'thing.session', entityId });
    await writeAudit(store.db, { type: 'system', job: 'incident-engine' }, { action: 'thing.system', entityId, details: { x: true } });
    await writeAudit(store.db, { type: 'operator' }, { action: 'thing.operator', entityId });
    assert.deepEqual(await rowsOf(entityId), [
      { actor_type: 'session', actor_id: userId, details: { [ACTING_USER_KEY]: userId } },
      { actor_type: 'system', actor_id: 'incident-engine', details: { x: true } },
      { actor_type: 'operator', actor_id: null, details: {} },
    ]);
  });
});
