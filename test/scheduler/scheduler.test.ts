// The scheduler end to end on a real store: every runnable monitor runs once per slot, split
// across two nodes with none run twice; paused and deleted monitors leave the schedule; the plan
// floor applies at hand-out; a stopped node's work moves to the other; manual states are restated
// on their slot and a paused manual monitor's once it is resumed.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { after, before, describe, it } from 'node:test';
import type { ProbeResult } from '../../src/probes/types.js';
import type { CheckResultRecord } from '../../src/results/types.js';
import { restateManualState } from '../../src/manual/index.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { nextSlotMs, phaseMs } from '../../src/scheduler/slots.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, overrideCaps, type Api } from '../targets/helpers.js';
import { tenantAtKindFloor, testScheduler } from './helpers.js';

const INTERVAL_MS = 10_000;
/** How far from its slot a run still counts as that slot's (the lag goal itself is bench:checks'). */
const EARLY_MS = 500;
const LATE_MS = 3000;

describe('scheduler: two nodes on one store', () => {
  let t: TestApp;
  let api: Api;
  let accountId: string;
  const runs: Array<{ node: string; id: string; at: number }> = [];
  const results: CheckResultRecord[] = [];
  const nodes: Scheduler[] = [];
  // What the nodes warn of (a failed or late lease renewal), shown when a slot goes unrun.
  const warnings: string[] = [];

  const node = (name: string): Scheduler => {
    const scheduler = testScheduler(t, {
      sink: { push: (r) => results.push(r) },
      execute: async (monitor): Promise<ProbeResult> => {
        runs.push({ node: name, id: monitor.id, at: Date.now() });
        return { status: 'up', duration_ms: 1, error: null };
      },
      restate: async (monitor) => { runs.push({ node: name, id: monitor.id, at: Date.now() }); },
      // All thirty monitors dial one host: a per-host cap of 2 would drop (and move) any slot
      // that shares a timer wake-up with two others, and this test counts every slot on its
      // place. The cap has its own tests (test/checks/engine.test.ts, throttle.test.ts).
      perHostMaxInflight: 1000,
      leases: { ttlMs: 2000, renewMs: 400 }, pollMs: 300, reloadMs: 3000,
      log: pino({ level: 'warn', base: { node: name } }, { write: (line: string) => void warnings.push(line.trim()) }),
    });
    nodes.push(scheduler);
    return scheduler;
  };

  before(async () => {
    t = await startTestApp({ config: { 'security.allow_private_targets': true } });
    ({ api, accountId } = await tenantAtKindFloor(t));
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await t.close();
  });

  /**
   * Each slot of each monitor inside [from, to] was run exactly once, and nothing else ran. A run
   * counts for a slot from just before it to LATE_MS after: both nodes share one process and one
   * embedded store here, and a loaded CI machine has started a check over a second late.
   */
  function assertExactlyOncePerSlot(ids: readonly string[], from: number, to: number, observed: typeof runs): void {
    const offsetOf = (at: number, phase: number): number => ((at - phase) % INTERVAL_MS + INTERVAL_MS) % INTERVAL_MS;
    const onSlot = (offset: number): boolean => offset <= LATE_MS || offset >= INTERVAL_MS - EARLY_MS;
    for (const id of ids) {
      const phase = phaseMs(id, 'local', INTERVAL_MS);
      const mine = observed.filter((r) => r.id === id);
      for (let slot = nextSlotMs(from, INTERVAL_MS, phase); slot <= to; slot += INTERVAL_MS) {
        const hits = mine.filter((r) => r.at >= slot - EARLY_MS && r.at <= slot + LATE_MS);
        const near = mine.map((r) => r.at - slot).sort((x, y) => Math.abs(x) - Math.abs(y))[0];
        assert.equal(hits.length, 1, `monitor ${id}: slot ${slot} ran ${hits.length} times (nearest run ${near ?? 'none'} ms from it); the nodes warned: ${JSON.stringify(warnings)}`);
      }
      for (const r of mine) assert.ok(onSlot(offsetOf(r.at, phase)), `monitor ${id} ran off its slot (offset ${offsetOf(r.at, phase)} ms)`);
    }
  }

  it('runs every monitor on its slots, once, across two nodes; paused ones do not run', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await api('POST', '/api/v1/targets', { name: `m${i}`, check: { type: 'tcp', host: '127.0.0.1', port: 9 }, interval: 10 });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    const paused = (await api('POST', '/api/v1/targets', { name: 'paused', check: { type: 'tcp', host: '127.0.0.1', port: 9 }, interval: 10, enabled: false })).json().id as string;
    const cron = (await api('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } })).json().id as string;
    const a = node('a');
    const b = node('b');
    await a.start();
    await b.start();
    // The first node takes every shard, then hands half over in its next rounds. A slot falling
    // while its shard is between the two runs on neither (the hand-over gap, up to a renewal), so
    // the window opens once both nodes hold their share: the sum alone is 30 before any hand-over.
    const settleBy = Date.now() + 15_000;
    while (!(a.scheduledCount > 0 && b.scheduledCount > 0 && a.scheduledCount + b.scheduledCount === 30) && Date.now() < settleBy) await sleep(100);
    assert.ok(a.scheduledCount > 0 && b.scheduledCount > 0, 'both nodes hold a share');
    assert.equal(a.scheduledCount + b.scheduledCount, 30, 'each monitor is scheduled on exactly one node');
    const from = Date.now();
    await sleep(21_000);
    const to = Date.now() - LATE_MS;
    const observed = runs.filter((r) => r.at >= from - EARLY_MS);
    assertExactlyOncePerSlot(ids, from, to, observed);
    assert.ok(observed.some((r) => r.node === 'a') && observed.some((r) => r.node === 'b'), 'both nodes work');
    assert.ok(!runs.some((r) => r.id === paused || r.id === cron), 'paused and heartbeat monitors are neither probed nor restated');
    const result = results.find((r) => r.targetId === ids[0]);
    assert.ok(result && result.region === 'local' && result.status === 'up' && result.checkedAt instanceof Date);
  });

  it('changes reach the schedule: a paused or deleted monitor stops, the plan floor applies at hand-out', async () => {
    const id = (await api('POST', '/api/v1/targets', { name: 'late', check: { type: 'tcp', host: '127.0.0.1', port: 9 }, interval: 10 })).json().id as string;
    await sleep(12_000);
    assert.ok(runs.some((r) => r.id === id), 'a new monitor is picked up by polling');
    const victims = runs.slice(0, 2).map((r) => r.id);
    assert.equal((await api('PATCH', `/api/v1/targets/${victims[0]}`, { enabled: false })).statusCode, 200);
    assert.equal((await api('DELETE', `/api/v1/targets/${victims[1]}`)).statusCode, 204);
    await overrideCaps(t, accountId, { min_check_interval_secs: 3600 });
    t.services.plans.invalidate(accountId);
    await sleep(4000); // one poll and one full reload
    const since = Date.now();
    await sleep(11_000);
    const later = runs.filter((r) => r.at >= since);
    assert.ok(!later.some((r) => victims.includes(r.id)), 'paused and deleted monitors left the schedule');
    // The floor (now 1 h) applies at hand-out: a run now may only be a monitor's 1-hour slot
    // (its phase can fall inside the window), never the old 10 s cadence.
    const HOUR_MS = 3_600_000;
    for (const r of later) {
      const offset = ((r.at - phaseMs(r.id, 'local', HOUR_MS)) % HOUR_MS + HOUR_MS) % HOUR_MS;
      assert.ok(offset < 1000 || offset > HOUR_MS - 1000, `monitor ${r.id} ran off its 1-hour slot`);
    }
    assert.equal(new Set(later.map((r) => r.id)).size, later.length, 'no monitor ran twice in 11 s');
  });
});

describe('scheduler: manual monitors', () => {
  const MINUTE_MS = 60_000;
  let t: TestApp;
  let api: Api;
  let scheduler: Scheduler | undefined;
  const probed: string[] = [];

  before(async () => {
    t = await startTestApp();
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
  });
  after(async () => {
    await scheduler?.stop();
    await t.close();
  });

  const create = async (body: Record<string, unknown>): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const setState = async (id: string, status: string, note: string): Promise<void> => {
    assert.equal((await api('PUT', `/api/v1/targets/${id}/state`, { status, note })).statusCode, 200);
  };
  const results = (id: string) => t.services.db.query<{ status: string; error: string | null; region: string; stale_after_ms: number | null; checked_at: Date }>(
    'SELECT status, error, region, stale_after_ms, checked_at FROM check_results WHERE target_id = $1 ORDER BY checked_at, id', [id]);
  const waitFor = async (id: string, count: number, until: number): Promise<void> => {
    while ((await results(id)).length < count && Date.now() < until) await sleep(100);
  };

  /**
   * A node region that puts the first slot of `early` 1.5-3 s from `now` and of `late` 4.5-7 s:
   * slots are fixed by (id, region) once a minute, and a test must not wait for the minute.
   */
  function regionWithSlotsSoon(early: string, late: string, now: number): string {
    const inWindow = (id: string, region: string, from: number, to: number): boolean =>
      nextSlotMs(now + from, MINUTE_MS, phaseMs(id, region, MINUTE_MS)) - now <= to;
    for (let i = 0; ; i++) {
      const region = `test-${i}`;
      if (inWindow(early, region, 1500, 3000) && inWindow(late, region, 4500, 7000)) return region;
    }
  }

  it('restates a running manual state on its slot; a paused one keeps its state and reports it once resumed', async () => {
    const running = await create({ name: 'board', check: { type: 'manual' } });
    await setState(running, 'down', 'planned outage');
    const paused = await create({ name: 'paused board', check: { type: 'manual' } });
    await setState(paused, 'degraded', 'slow checkouts');
    assert.equal((await api('PATCH', `/api/v1/targets/${paused}`, { enabled: false })).statusCode, 200);
    const pausedState = (await api('GET', `/api/v1/targets/${paused}/state`)).json();
    await create({ name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } });

    const start = Date.now();
    const s = t.services;
    scheduler = testScheduler(t, {
      sink: { push: (r) => probed.push(r.targetId) }, region: regionWithSlotsSoon(running, paused, start),
      execute: async (monitor): Promise<ProbeResult> => {
        probed.push(monitor.id);
        return { status: 'up', duration_ms: 1, error: null };
      },
      restate: async (monitor) => { await restateManualState(s.db, s.results, s.clock, monitor); },
      perHostMaxInflight: 1,
      leases: { ttlMs: 3000, renewMs: 1000 }, pollMs: 200, reloadMs: 60_000,
    });
    await scheduler.start();
    await sleep(500); // the shards' monitors are loaded
    assert.equal(scheduler.scheduledCount, 1, 'only the running manual monitor: not the paused one, not the heartbeat');

    await waitFor(running, 2, start + 4000);
    const [, restated] = await results(running);
    assert.ok(restated && restated.checked_at.getTime() - start < 4000, 'restated on its slot');
    assert.deepEqual([restated.status, restated.error, restated.region, restated.stale_after_ms], ['down', 'planned outage', 'none', null]);
    assert.equal((await results(paused)).length, 1, 'the paused monitor wrote nothing');
    assert.deepEqual((await api('GET', `/api/v1/targets/${paused}/state`)).json(), pausedState, 'and kept its state');

    assert.equal((await api('PATCH', `/api/v1/targets/${paused}`, { enabled: true })).statusCode, 200);
    await waitFor(paused, 2, start + 8000);
    assert.deepEqual((await results(paused)).slice(1).map((r) => [r.status, r.error, r.region, r.stale_after_ms]), [['degraded', 'slow checkouts', 'none', null]],
      'resumed, it reports the state it kept at its next slot');
    assert.equal((await results(running)).length, 2, 'once a minute: no second restatement within seconds');
    assert.deepEqual(probed, [], 'nothing probed, nothing through the probe sink');
  });
});
