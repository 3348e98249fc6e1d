// pgArray: what a batch statement's array parameter holds arrives intact in the store, on the
// driver in use (pg or PGlite), whatever the elements contain.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { literalParams, pgArray } from '../../src/db/arrays.js';
import { createTestStore, type TestStore } from '../helpers/store.js';

describe('pgArray', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('writes bare what needs no quoting', () => {
    assert.equal(pgArray([1, 2.5, -3, true, false, null, 'up', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b']),
      '{1,2.5,-3,t,f,NULL,up,0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}');
    assert.equal(pgArray([]), '{}');
  });

  it('round-trips text the literal syntax would misread', async () => {
    const texts = ['', 'NULL', 'null', 'a,b', '{x}', 'say "hi"', 'back\\slash', ' padded ', 'line\nbreak', 'ünï', null, 'plain'];
    const [row] = await store.db.query<{ out: Array<string | null> }>('SELECT $1::text[] AS out', [pgArray(texts)]);
    assert.deepEqual(row!.out, texts);
  });

  it('round-trips numbers, booleans and ids into typed arrays', async () => {
    const ms = [1_700_000_000_123, 0, -1.5, 2 ** 53 - 1];
    const [row] = await store.db.query<{ ms: number[]; flags: boolean[]; ids: string[] }>(
      'SELECT $1::float8[] AS ms, $2::boolean[] AS flags, $3::uuid[] AS ids',
      [pgArray(ms), pgArray([true, false, null]), pgArray(['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'])]);
    assert.deepEqual(row!.ms.map(Number), ms);
    assert.deepEqual(row!.flags, [true, false, null]);
    assert.deepEqual(row!.ids, ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b']);
  });
});

describe('literalParams: plain array parameters as literals, on both executors', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('turns flat arrays of scalars and Dates into literals and leaves everything else alone', () => {
    const objects = [{ a: 1 }];
    const params = [[1, 'a b', null, undefined, true], new Date(0), objects, 'text', [new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6))]];
    assert.deepEqual(literalParams(params), ['{1,"a b",NULL,NULL,t}', new Date(0), objects, 'text', '{2026-01-02T03:04:05.006Z}']);
    const scalars = ['x', 1];
    assert.equal(literalParams(scalars), scalars, 'no array parameter: the same array, not a copy');
    assert.equal(literalParams(undefined), undefined);
  });

  it('round-trips plain arrays through the driver, cast or inferred', async () => {
    const texts = ['', 'NULL', 'a,b', '{x}', 'say "hi"', 'back\\slash', 'line\nbreak', null, undefined];
    const at = new Date(Date.UTC(2026, 10, 24, 12, 30, 0, 250));
    const [row] = await store.db.query<{ texts: Array<string | null>; ats: Date[]; found: boolean }>(
      'SELECT $1::text[] AS texts, $2::timestamptz[] AS ats, 3 = ANY($3) AS found', [texts, [at], [1, 2, 3]]);
    assert.deepEqual(row!.texts, texts.map((t) => t ?? null));
    assert.equal(row!.ats[0]!.getTime(), at.getTime());
    assert.equal(row!.found, true);
  });
});
