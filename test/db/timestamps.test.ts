// Timestamps read back from either store are the instants written, in every year the API takes
// (0001-9999): plain, in arrays, named or not. PGlite's own parser read 0001-0099 as 19xx/20xx.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestStore, type TestStore } from '../helpers/store.js';

const INSTANTS = ['0001-01-01T00:00:00.000Z', '0005-01-01T00:00:00.000Z', '0029-01-01T00:00:00.000Z', '0099-06-01T12:30:00.250Z',
  '0100-01-01T00:00:00.000Z', '2026-11-28T15:00:00.123Z', '9999-12-31T23:59:59.999Z'];

describe('timestamps from the store', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('read back as the instants written, alone and in arrays, in every year 0001-9999', async () => {
    for (const text of INSTANTS) {
      const at = new Date(text);
      for (const prepared of [undefined, 'kw_test_timestamps']) {
        const [row] = await store.db.query<{ one: Date; many: Date[] }>('SELECT $1::timestamptz AS one, ARRAY[$1::timestamptz, NULL] AS many', [at], prepared ? { prepared } : undefined);
        assert.equal(row!.one.toISOString(), text, `${text}${prepared ? ' (prepared)' : ''}`);
        assert.deepEqual(row!.many.map((d) => d?.toISOString() ?? null), [text, null]);
      }
    }
  });
});
