// The per-host throttle drops a tick over its cap (monitoring-api.md, Limits); slots are fixed, so
// a monitor whose slot falls just after a busy one's on the same host would be dropped on every
// slot, never checked. A dropped monitor moves its slot instead; the one it met keeps its own.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { ProbeResult } from '../../src/probes/types.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { movedPhaseMs, phaseMs } from '../../src/scheduler/slots.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { tenantAtKindFloor, testScheduler } from './helpers.js';

const INTERVAL_MS = 10_000;
/** How long each check holds its host: longer than the gap between the two slots chosen below. */
const HOLD_MS = 400;

/** Where `at` falls in a 10 s interval, relative to `phase`, in (-interval/2, interval/2]. */
function offsetFrom(at: number, phase: number): number {
  const o = ((at - phase) % INTERVAL_MS + INTERVAL_MS) % INTERVAL_MS;
  return o > INTERVAL_MS / 2 ? o - INTERVAL_MS : o;
}

describe('scheduler: a tick the per-host throttle drops', () => {
  let t: TestApp;
  let scheduler: Scheduler | undefined;
  before(async () => { t = await startTestApp({ config: { 'security.allow_private_targets': true } }); });
  after(async () => {
    await scheduler?.stop();
    await t.close();
  });

  it('moves the dropped monitor to another slot, where it runs; the busy one keeps its slots', async () => {
    const { api } = await tenantAtKindFloor(t);
    // Monitors on one host until two slots fall 60-250 ms apart: more than a timer quantum (so
    // they start in order) and less than HOLD_MS (so the first still holds the host).
    const ids: string[] = [];
    let pair: { first: string; second: string } | undefined;
    while (!pair) {
      assert.ok(ids.length < 200, 'no two slots close enough');
      const res = await api('POST', '/api/v1/targets', { name: `m${ids.length}`, check: { type: 'tcp', host: '127.0.0.1', port: 9 }, interval: 10 });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      for (const other of ids) {
        const gap = offsetFrom(phaseMs(id, 'local', INTERVAL_MS), phaseMs(other, 'local', INTERVAL_MS));
        if (Math.abs(gap) >= 60 && Math.abs(gap) <= 250) pair = gap > 0 ? { first: other, second: id } : { first: id, second: other };
      }
      ids.push(id);
    }
    for (const id of ids) if (id !== pair.first && id !== pair.second) assert.equal((await api('DELETE', `/api/v1/targets/${id}`)).statusCode, 204);

    const runs: Array<{ id: string; at: number }> = [];
    const registry = new Registry();
    scheduler = testScheduler(t, {
      registry, perHostMaxInflight: 1,
      execute: async (monitor): Promise<ProbeResult> => {
        runs.push({ id: monitor.id, at: Date.now() });
        await sleep(HOLD_MS);
        return { status: 'up', duration_ms: HOLD_MS, error: null };
      },
    });
    const throttled = async (): Promise<number> =>
      (await registry.getSingleMetric('keepwatch_checks_throttled_total')!.get()).values[0]?.value ?? 0;

    const { first, second } = pair;
    const moved = movedPhaseMs(phaseMs(second, 'local', INTERVAL_MS), INTERVAL_MS);
    const ranMoved = () => runs.some((r) => r.id === second && Math.abs(offsetFrom(r.at, moved)) < 1000);
    await scheduler.start();
    // At most two intervals until the two slots meet (the start may fall between them), then the
    // moved slot comes within one.
    for (const end = Date.now() + 3 * INTERVAL_MS + 5000; !ranMoved(); await sleep(200)) {
      if (Date.now() > end) assert.fail(`the dropped monitor never ran on its moved slot: ${JSON.stringify(runs.map((r) => [r.id === first ? 'first' : 'second', offsetFrom(r.at, phaseMs(r.id, 'local', INTERVAL_MS))]))}`);
    }
    assert.ok(await throttled() >= 1, 'its tick was dropped first, and counted');
    const firstRuns = runs.filter((r) => r.id === first);
    assert.ok(firstRuns.length >= 1);
    for (const r of firstRuns) assert.ok(Math.abs(offsetFrom(r.at, phaseMs(first, 'local', INTERVAL_MS))) < 1000, 'the busy monitor keeps its own slots');
  });
});
