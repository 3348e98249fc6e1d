// Ids: UUIDv7 strings, unique, and in creation order (inserts append to their index).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUuid, newId } from '../../src/shared/ids.js';

describe('newId', () => {
  it('mints distinct version-7 ids in order, also within one millisecond and across pool refills', () => {
    const ids = Array.from({ length: 2_000 }, () => newId());
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) {
      assert.ok(isUuid(id));
      assert.equal(id[14], '7', 'version 7');
      assert.match(id[19]!, /[89ab]/, 'RFC 9562 variant');
    }
    assert.deepEqual([...ids].sort(), ids, 'sorted as minted');
    const ms = Number.parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.now()) < 5_000, 'the time prefix is now');
  });
});
