// Named prepared statements (`{ prepared }`): the same answers as a plain query on the store in use,
// whatever the parameters hold, inside and outside transactions; on PGlite they run as SQL
// PREPARE/EXECUTE with the parameters written as literals, so those must survive any text.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pgArray } from '../../src/db/arrays.js';
import { sqlLiteral } from '../../src/db/sql-literal.js';
import { createTestStore, usePostgres, type TestStore } from '../helpers/store.js';

const SQL = `SELECT $1::text AS text, $2::timestamptz AS at, $3::jsonb AS doc, $4::int[] AS ints, $5::float8 AS num,
                    $6::boolean AS flag, $7::text AS nothing, $8::bytea AS bytes`;

describe('prepared statements', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  const awkward = ["it's", "''; DROP TABLE orgs; --", 'back\\slash \\x41', '$1 $$ $q$', 'line\nbreak\ttab', 'ünï ☃', '', 'E\'\\\''];

  it('answers as a plain query does, for every kind of parameter and awkward text', async () => {
    for (const [i, text] of awkward.entries()) {
      const params = [text, new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), { quote: text, n: i }, [i, -1, 0], i + 0.25, i % 2 === 0, null, Buffer.from([0, 39, 92, 255])];
      const plain = await store.db.query(SQL, params);
      const named = await store.db.query(SQL, params, { prepared: 'kw_test_prepared_kinds' });
      assert.deepEqual(named, plain, `text ${JSON.stringify(text)}`);
      assert.equal((named[0] as { text: string }).text, text);
    }
    // The injection attempt was only ever text.
    const [orgs] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_tables WHERE tablename = $1', ['orgs']);
    assert.equal(orgs!.n, 1);
  });

  it('takes array literals with quoted elements and NULLs', async () => {
    const texts = ['a,b', 'say "hi"', "it's", null, 'NULL', 'back\\slash'];
    const [row] = await store.db.query<{ out: Array<string | null> }>('SELECT $1::text[] AS out', [pgArray(texts)], { prepared: 'kw_test_prepared_array' });
    assert.deepEqual(row!.out, texts);
  });

  it('serves later calls with other values, in transactions too, and survives a rolled-back first use', async () => {
    const sql = 'SELECT $1::int * 2 AS doubled';
    await assert.rejects(store.db.transaction(async (tx) => {
      assert.deepEqual(await tx.query(sql, [2], { prepared: 'kw_test_prepared_tx' }), [{ doubled: 4 }]);
      throw new Error('roll back');
    }), /roll back/);
    assert.deepEqual(await store.db.query(sql, [21], { prepared: 'kw_test_prepared_tx' }), [{ doubled: 42 }]);
    assert.deepEqual(await store.db.transaction((tx) => tx.query(sql, [5], { prepared: 'kw_test_prepared_tx' })), [{ doubled: 10 }]);
  });

  it('refuses text with NUL, as PostgreSQL refuses a bound one', async () => {
    await assert.rejects(store.db.query('SELECT $1::text AS t', ['a\0b'], { prepared: 'kw_test_prepared_nul' }), /0x00/);
  });

  // A PostgreSQL server's planner costs are its operator's to set.
  if (!usePostgres) it('runs PGlite with an index lookup priced as a page-cache read, not a disk seek', async () => {
    const [row] = await store.db.query<{ random_page_cost: string }>('SHOW random_page_cost');
    assert.equal(row!.random_page_cost, '1.1');
  });
});

describe('sqlLiteral', () => {
  it('quotes by doubling the quote and nothing else', () => {
    assert.equal(sqlLiteral("it's \\n"), "'it''s \\n'");
    assert.equal(sqlLiteral(null), 'NULL');
    assert.equal(sqlLiteral(undefined), 'NULL');
    assert.equal(sqlLiteral(12.5), "'12.5'");
    assert.equal(sqlLiteral(false), "'false'");
    assert.equal(sqlLiteral(new Date(0)), "'1970-01-01T00:00:00.000Z'");
    assert.equal(sqlLiteral({ a: "b'" }), `'{"a":"b''"}'`);
    assert.equal(sqlLiteral(Buffer.from([1, 171])), "'\\x01ab'");
  });

  it('refuses an array (flat ones arrive as literals; a nested one would be read two ways)', () => {
    assert.throws(() => sqlLiteral([[1, 2], [3, 4]]), /arrays of scalars/);
  });
});
