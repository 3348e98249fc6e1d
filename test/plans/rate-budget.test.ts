import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openPostgres, type Db } from '../../src/db/db.js';
import { RateLimiter, rateCategoryOf, type Subject, type Verdict } from '../../src/plans/rate-budget.js';
import type { Clock } from '../../src/shared/context.js';
import { createTestStore, usePostgres, type TestStore } from '../helpers/store.js';

const log = pino({ level: 'silent' });
const MINUTE = 60_000;

/** A clock set by hand, at a whole minute to start with. */
class ManualClock implements Clock {
  constructor(public ms = Math.floor(Date.now() / MINUTE) * MINUTE) {}
  now(): Date { return new Date(this.ms); }
}

const account = (id: string): Subject => ({ kind: 'account', id });
const user = (id: string): Subject => ({ kind: 'user', id });

/** How many of `n` takes are admitted. */
function admitted(limiter: RateLimiter, subjects: Subject[], limit: number | null, n: number): number {
  let ok = 0;
  for (let i = 0; i < n; i++) if (limiter.take(subjects, 'api_reads_per_minute', limit).allowed) ok++;
  return ok;
}

function refused(verdict: Verdict): Extract<Verdict, { allowed: false }> {
  assert.equal(verdict.allowed, false, 'expected a refusal');
  return verdict as Extract<Verdict, { allowed: false }>;
}

describe('rateCategoryOf: the rate-budget table', () => {
  const cases: [string, string, string | null][] = [
    ['POST', '/api/v1/targets', 'api_writes_per_minute'],
    ['PATCH', '/api/v1/targets/0190b7c8-0000-7000-8000-000000000001', 'api_writes_per_minute'],
    ['DELETE', '/api/v1/variables/0190b7c8-0000-7000-8000-000000000001', 'api_writes_per_minute'],
    ['PUT', '/api/v1/account/holds', 'api_writes_per_minute'],
    ['GET', '/api/v1/targets', 'api_reads_per_minute'],
    ['HEAD', '/api/v1/targets', 'api_reads_per_minute'],
    ['OPTIONS', '/api/v1/regions', 'api_reads_per_minute'],
    ['GET', '/mcp', 'api_reads_per_minute'],
    ['POST', '/mcp', 'api_reads_per_minute'],
    ['DELETE', '/mcp/session', 'api_reads_per_minute'],
    ['POST', '/mcp/tools/targets/bulk', 'api_reads_per_minute'],
    ['POST', '/api/v1/targets/bulk', 'bulk_ops_per_minute'],
    ['POST', '/api/v1/targets/bulk-action', 'bulk_ops_per_minute'],
    ['GET', '/api/v1/targets/bulk', 'bulk_ops_per_minute'],
    ['POST', '/api/v1/targets/0190b7c8-0000-7000-8000-000000000001/duplicate', 'bulk_ops_per_minute'],
    ['POST', '/api/v1/targets/test', 'test_now_per_minute'],
    ['POST', '/api/v1/notification-channels/test', 'test_now_per_minute'],
    ['POST', '/api/v1/targets/0190b7c8-0000-7000-8000-000000000001/check-now', 'check_now_per_minute'],
    ['POST', '/api/v1/support', 'support'],
    ['GET', '/api/v1/status-pages/x/support', 'support'],
    ['GET', '/health', null],
    ['POST', '/operator/users', null],
    ['GET', '/api/public/v1/status/acme', null],
    ['GET', '/api/v1', null],
    ['GET', '/mcpx', null],
    ['POST', '/ping/abc/test', null],
  ];
  for (const [method, url, category] of cases) {
    it(`${method} ${url} -> ${category}`, () => assert.equal(rateCategoryOf(method, url), category));
  }

  it('ignores the query string', () => {
    assert.equal(rateCategoryOf('POST', '/api/v1/targets?x=/bulk'), 'api_writes_per_minute');
    assert.equal(rateCategoryOf('GET', '/api/v1/targets?next=/test'), 'api_reads_per_minute');
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/test?dry=1'), 'test_now_per_minute');
    assert.equal(rateCategoryOf('GET', '/health?/api/v1/x'), null);
  });

  it('reads escaped paths as the router does (no way around the bulk budget)', () => {
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/%62ulk'), 'bulk_ops_per_minute');
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/abc/%64uplicate'), 'bulk_ops_per_minute');
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/%74est'), 'test_now_per_minute');
    assert.equal(rateCategoryOf('POST', '/%61pi/v1/targets'), 'api_writes_per_minute');
    // An escaped slash stays inside its segment, as the router keeps it.
    assert.equal(rateCategoryOf('PATCH', '/api/v1/targets/a%2Ftest'), 'api_writes_per_minute');
  });

  it('reads the path the router routes: a fragment is cut off, an absolute-form target gives its path', () => {
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/test#x'), 'test_now_per_minute');
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/abc/check-now#x?y'), 'check_now_per_minute');
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/abc/duplicate#/x'), 'bulk_ops_per_minute');
    assert.equal(rateCategoryOf('GET', 'http://127.0.0.1/api/v1/regions'), 'api_reads_per_minute');
    assert.equal(rateCategoryOf('POST', 'HTTPS://api.example.com:8443/api/v1/targets/test?x=1'), 'test_now_per_minute');
    assert.equal(rateCategoryOf('POST', 'http://h/api/v1/targets/%62ulk'), 'bulk_ops_per_minute');
    // An escaped `#` or `?` is part of a segment (the router splits before decoding).
    assert.equal(rateCategoryOf('POST', '/api/v1/targets/a%23/check-now'), 'check_now_per_minute');
    assert.equal(rateCategoryOf('GET', 'http://h'), null);
    assert.equal(rateCategoryOf('GET', 'http://h/health'), null);
  });
});

describe('RateLimiter on one node', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  it('admits up to the budget in a window, refuses after, and a new minute resets', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(store.db, clock, log, 1000);
    assert.equal(admitted(limiter, [account('a1'), user('u1')], 5, 8), 5);
    clock.ms += 59_999;
    assert.equal(admitted(limiter, [account('a1'), user('u1')], 5, 1), 0);
    clock.ms += 1;
    assert.equal(admitted(limiter, [account('a1'), user('u1')], 5, 8), 5);
  });

  it('keeps each category apart', () => {
    const limiter = new RateLimiter(store.db, new ManualClock(), log, 1000);
    const subjects = [account('a-cat'), user('u-cat')];
    assert.equal(admitted(limiter, subjects, 2, 3), 2);
    assert.equal(limiter.take(subjects, 'api_writes_per_minute', 2).allowed, true);
    assert.equal(limiter.take(subjects, 'bulk_ops_per_minute', 2).allowed, true);
  });

  it('Retry-After is the whole seconds left in the window, at least 1', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(store.db, clock, log, 1000);
    const subjects = [account('a-retry'), user('u-retry')];
    assert.equal(admitted(limiter, subjects, 1, 1), 1);
    const at = (offsetMs: number) => {
      clock.ms = Math.floor(clock.ms / MINUTE) * MINUTE + offsetMs;
      return refused(limiter.take(subjects, 'api_reads_per_minute', 1)).retryAfterSecs;
    };
    assert.equal(at(0), 60);
    assert.equal(at(30_000), 30);
    assert.equal(at(30_001), 30);
    assert.equal(at(59_500), 1);
    assert.equal(at(59_999), 1);
  });

  it('an unlimited budget (null) always admits and counts nothing', () => {
    const limiter = new RateLimiter(store.db, new ManualClock(), log, 1000);
    const subjects = [account('a-null'), user('u-null')];
    assert.equal(admitted(limiter, subjects, null, 1000), 1000);
    assert.equal(admitted(limiter, subjects, 3, 5), 3, 'the unlimited takes left nothing behind');
  });

  it('checks the account tier first, then the user tier', () => {
    const limiter = new RateLimiter(store.db, new ManualClock(), log, 1000);
    assert.equal(admitted(limiter, [account('a1'), user('u1')], 3, 3), 3);
    // Both tiers are spent: the account is named.
    assert.equal(refused(limiter.take([account('a1'), user('u1')], 'api_reads_per_minute', 3)).subject.kind, 'account');
    // Another account of the same user: the account admits, the user tier refuses.
    const verdict = refused(limiter.take([account('a2'), user('u1')], 'api_reads_per_minute', 3));
    assert.deepEqual(verdict.subject, user('u1'));
    // Another user on the first account: the account tier refuses.
    assert.deepEqual(refused(limiter.take([account('a1'), user('u2')], 'api_reads_per_minute', 3)).subject, account('a1'));
  });

  it('counts a request only when every tier admits it', () => {
    const limiter = new RateLimiter(store.db, new ManualClock(), log, 1000);
    assert.equal(admitted(limiter, [account('b1'), user('v1')], 3, 3), 3);
    // v1 is refused on b2 by the user tier: b2 must not have been charged for it.
    assert.equal(admitted(limiter, [account('b2'), user('v1')], 3, 5), 0);
    assert.equal(admitted(limiter, [account('b2'), user('v2')], 3, 5), 3);
    // v3 is refused by b2's account tier: v3's own budget stays whole.
    assert.equal(admitted(limiter, [account('b2'), user('v3')], 3, 2), 0);
    assert.equal(admitted(limiter, [account('b3'), user('v3')], 3, 5), 3);
  });
});

describe('RateLimiter across nodes', () => {
  let store: TestStore;
  before(async () => { store = await createTestStore(); });
  after(async () => { await store.drop(); });

  async function sharesCounts(dbA: Db, dbB: Db, prefix: string): Promise<void> {
    const clock = new ManualClock();
    const nodeA = new RateLimiter(dbA, clock, log, 1000);
    const nodeB = new RateLimiter(dbB, clock, log, 1000);
    const subjects = [account(`${prefix}-acct`), user(`${prefix}-user`)];
    assert.equal(admitted(nodeA, subjects, 10, 4), 4);
    await nodeA.sync();
    await nodeB.sync();
    assert.equal(admitted(nodeB, subjects, 10, 10), 6, 'node B learns what node A admitted');
    await nodeB.sync();
    await nodeA.sync();
    assert.equal(admitted(nodeA, subjects, 10, 10), 0, 'and node A learns what node B admitted');
    // The user tier is shared too: the same user on another account is refused on node A.
    assert.deepEqual(refused(nodeA.take([account(`${prefix}-other`), user(`${prefix}-user`)], 'api_reads_per_minute', 10)).subject, user(`${prefix}-user`));
    const [row] = await dbA.query<{ count: number }>('SELECT count FROM rate_counters WHERE key = $1', [`account:${prefix}-acct:api_reads_per_minute`]);
    assert.equal(row?.count, 10);
    await nodeA.stop();
    await nodeB.stop();
  }

  it('two limiters on one store share counts after sync()', async () => {
    await sharesCounts(store.db, store.db, 'same-db');
  });

  // Separate pools (separate nodes) exist only on a server; PGlite admits one process.
  if (usePostgres) {
    it('two connection pools on one PostgreSQL database share counts after sync()', async () => {
      const second = openPostgres(store.url!, { max: 2 });
      try {
        await sharesCounts(store.db, second, 'two-pools');
      } finally {
        await second.close();
      }
    });
  }

  it('a window over is not carried into the next one', async () => {
    const clock = new ManualClock();
    const nodeA = new RateLimiter(store.db, clock, log, 1000);
    const nodeB = new RateLimiter(store.db, clock, log, 1000);
    const subjects = [account('roll-acct'), user('roll-user')];
    assert.equal(admitted(nodeA, subjects, 3, 3), 3);
    await nodeA.sync();
    clock.ms += MINUTE;
    await nodeB.sync();
    assert.equal(admitted(nodeB, subjects, 3, 5), 3);
  });
});
