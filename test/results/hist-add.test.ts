// kw_hist_add, the store's histogram sum that rollup upserts use: for any two sparse histograms,
// whether one holds the other's buckets or not, it gives what the JavaScript merge gives.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { fromSql, merge, toSqlArray, type Histogram } from '../../src/results/histogram.js';
import { createTestStore, type TestStore } from '../helpers/store.js';

const histogram = fc.record({ lo: fc.integer({ min: 0, max: 300 }), counts: fc.array(fc.nat({ max: 1000 }), { maxLength: 40 }) })
  .map((h): Histogram => ({ lo: h.lo, counts: h.counts }));

describe('kw_hist_add', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  /** The sum as the store holds it (an empty histogram is NULL, whatever its bound). */
  const sum = async (a: Histogram, b: Histogram): Promise<string | null> => {
    const [row] = await store.db.query<{ lower: number | null; csv: string | null }>(
      `SELECT array_lower(h, 1) AS lower, array_to_string(h, ',') AS csv
         FROM (SELECT kw_hist_add($1::integer[], $2::integer[]) AS h) s`, [toSqlArray(a), toSqlArray(b)]);
    return toSqlArray(fromSql(row!.lower, row!.csv));
  };

  it('adds inside, across and outside the stored buckets as the JavaScript merge does', async () => {
    const cases: Array<[Histogram, Histogram]> = [
      [{ lo: 10, counts: [1, 2, 3, 4] }, { lo: 11, counts: [5] }], // inside: added in place
      [{ lo: 10, counts: [1, 2] }, { lo: 8, counts: [1, 0, 0, 7] }], // reaches below and into it
      [{ lo: 10, counts: [1, 2] }, { lo: 11, counts: [1, 1, 1] }], // reaches above
      [{ lo: 10, counts: [1] }, { lo: 20, counts: [2] }], // apart
      [{ lo: 10, counts: [1, 2, 3] }, { lo: 10, counts: [3, 2, 1] }], // the same span
    ];
    for (const [a, b] of cases) assert.equal(await sum(a, b), toSqlArray(merge(a, b)), `${toSqlArray(a)} + ${toSqlArray(b)}`);
  });

  it('agrees with the JavaScript merge on any pair, and a missing side is the other', async () => {
    await fc.assert(fc.asyncProperty(histogram, histogram, async (a, b) => {
      assert.equal(await sum(a, b), toSqlArray(merge(a, b)));
    }), { numRuns: 150 });
  });
});
