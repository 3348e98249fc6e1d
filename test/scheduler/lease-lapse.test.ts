// A node whose lease renewal stalls past its safe margin stops running checks, as it must; this
// file shows that it is never silent about it (a metric a slot, one warning a lapse, a note when
// it recovers) and that a stalled round is not joined by others piling up behind it.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { Db } from '../../src/db/db.js';
import type { ProbeResult } from '../../src/probes/types.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantAtKindFloor, testScheduler } from './helpers.js';

const RENEW_SQL = 'UPDATE scheduler_leases SET lease_until = now()';
const ROUND_OPENING_SQL = 'INSERT INTO scheduler_nodes';

async function waitFor(what: string, done: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !done(); await sleep(50)) if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
}

describe('scheduler: a lapse of its leases', () => {
  let t: TestApp;
  let scheduler: Scheduler | undefined;
  before(async () => { t = await startTestApp({ config: { 'security.allow_private_targets': true } }); });
  after(async () => {
    await scheduler?.stop();
    await t.close();
  });

  it('counts the slots it does not run, warns once, says when checks resume, and never runs two rounds at once', async () => {
    const { api } = await tenantAtKindFloor(t);
    // Forty monitors at the 10 s floor: a slot every quarter second on average, so the 3 s the
    // test watches hold about twelve.
    for (let i = 0; i < 40; i++) {
      const res = await api('POST', '/api/v1/targets', { name: `m${i}`, check: { type: 'tcp', host: '127.0.0.1', port: 9 }, interval: 10 });
      assert.equal(res.statusCode, 201, res.body);
    }

    // The renewing statement hangs while `stall` is set; every round's opening query is counted.
    let stall: Promise<void> | undefined;
    let roundsOpened = 0;
    const db = t.services.db;
    const stallingDb: Db = new Proxy(db, {
      get: (target, key) => (key === 'query'
        ? async (sql: string, ...rest: unknown[]) => {
          if (sql.includes(ROUND_OPENING_SQL)) roundsOpened++;
          if (sql.includes(RENEW_SQL) && stall) await stall;
          return (target.query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
        }
        : Reflect.get(target, key)),
    });

    const logs: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
    const registry = new Registry();
    const runs: number[] = [];
    scheduler = testScheduler(t, {
      db: stallingDb, log, registry, perHostMaxInflight: 100, leases: { ttlMs: 1000, renewMs: 250 }, pollMs: 300,
      execute: async (): Promise<ProbeResult> => {
        runs.push(Date.now());
        return { status: 'up', duration_ms: 1, error: null };
      },
    });
    const lapsedSlots = async (): Promise<number> =>
      (await registry.getSingleMetric('keepwatch_check_slots_lease_lapsed_total')!.get()).values[0]?.value ?? 0;
    const warnings = () => logs.filter((l) => l.level === 40 && l.msg.includes('past their safe end'));
    const resumed = () => logs.filter((l) => l.level === 30 && l.msg.includes('checks resume'));

    await scheduler.start();
    await waitFor('a first check', () => runs.length > 0, 15_000);
    assert.equal(await lapsedSlots(), 0, 'nothing is counted while renewals keep up');
    assert.equal(warnings().length, 0);

    let release!: () => void;
    stall = new Promise<void>((resolve) => { release = resolve; });
    const roundsBefore = roundsOpened;
    try {
      // The margin (ttl - renew = 750 ms) runs out, then about twelve slots pass.
      await sleep(4000);
      const lapsedAt = Date.now() - 3000;
      assert.deepEqual(runs.filter((at) => at > lapsedAt), [], 'no check runs once the margin is gone');
      assert.ok(await lapsedSlots() >= 2, `slots not run are counted (${await lapsedSlots()})`);
      assert.equal(warnings().length, 1, 'one warning for the whole lapse, not one a slot');
      assert.ok(roundsOpened - roundsBefore <= 1, `no round starts while one is stalled (${roundsOpened - roundsBefore} did)`);
    } finally {
      // Else the stalled round would hold up the scheduler's stop.
      stall = undefined;
      release();
    }
    const releasedAt = Date.now();
    await waitFor('checks to resume', () => runs.some((at) => at > releasedAt), 10_000);
    await waitFor('the note that checks resume', () => resumed().length === 1, 2_000);
    const counted = await lapsedSlots();
    await sleep(1500);
    assert.equal(await lapsedSlots(), counted, 'the count stops once renewals keep up again');
    assert.equal(warnings().length, 1);
  });
});
