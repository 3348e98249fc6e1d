// Pure scheduling rules: effective interval, id-fixed slots spread over the interval, shards,
// the hand-out region cap, the throttle key and the due-time heap.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../src/shared/ids.js';
import { DueHeap } from '../../src/scheduler/heap.js';
import { regionsAtHandOut } from '../../src/targets/regions.js';
import { CHECKS_PER_WAKE, dispatchQuantumMs, effectiveIntervalSecs, MAX_DISPATCH_QUANTUM_MS, movedPhaseMs, nextSlotMs, phaseMs, SHARD_COUNT, shardOf } from '../../src/scheduler/slots.js';
import { HostThrottle, hostPortOf } from '../../src/scheduler/throttle.js';
import { toMonitor, type HandOutDeps, type MonitorRow } from '../../src/scheduler/monitors.js';
import type { PlanService } from '../../src/plans/service.js';
import type { Sealer } from '../../src/shared/seal.js';
import type { OperatorRegionT } from '../../src/regions/schema.js';

describe('scheduler: slots', () => {
  it('the timer wakes about every CHECKS_PER_WAKE checks of the node\'s rate, at least every ms, at most every 50 ms', () => {
    assert.equal(CHECKS_PER_WAKE, 5);
    assert.equal(MAX_DISPATCH_QUANTUM_MS, 50);
    assert.equal(dispatchQuantumMs(1_000), 5, '1,000 checks/s: five checks a wake-up');
    assert.equal(dispatchQuantumMs(250), 20);
    assert.equal(dispatchQuantumMs(100), 50, '100 checks/s: 50 ms');
    assert.equal(dispatchQuantumMs(3), 50, 'a quiet node starts a check at most 50 ms late');
    assert.equal(dispatchQuantumMs(0), 50, 'no jobs');
    assert.equal(dispatchQuantumMs(100_000), 1, 'never below a millisecond');
    assert.equal(dispatchQuantumMs(Number.NaN), 50);
  });

  it('the effective interval is max(stored, plan floor, kind floor)', () => {
    assert.equal(effectiveIntervalSecs('http', 30, 60), 60, 'plan floor raised since the write');
    assert.equal(effectiveIntervalSecs('http', 120, 60), 120);
    assert.equal(effectiveIntervalSecs('http', 5, null), 10, 'kind floor');
    assert.equal(effectiveIntervalSecs('tls_cert', 60, 30), 3600);
  });

  it('a manual state is restated every 60 s whatever the plan floor', () => {
    assert.equal(effectiveIntervalSecs('manual', 60, 180), 60);
    assert.equal(effectiveIntervalSecs('manual', 60, 3600), 60);
    assert.equal(hostPortOf({ type: 'manual' }), null, 'no host: the per-host throttle does not apply');
  });

  it('slots are interval-spaced, at a phase fixed by the id, never before the asked time', () => {
    const interval = 10_000;
    for (let i = 0; i < 200; i++) {
      const id = newId();
      const phase = phaseMs(id, 'local', interval);
      assert.ok(phase >= 0 && phase < interval);
      assert.equal(phaseMs(id, 'local', interval), phase, 'stable');
      const at = 1_700_000_000_000 + i * 7919;
      const slot = nextSlotMs(at, interval, phase);
      assert.ok(slot >= at && slot < at + interval);
      assert.equal(((slot - phase) % interval + interval) % interval, 0);
    }
    assert.equal(nextSlotMs(20_000 + 300, 10_000, 300), 20_300, 'a slot exactly at the time is that slot');
  });

  it('phases spread start times over the interval (no herd at :00)', () => {
    const interval = 60_000;
    const buckets = new Array(6).fill(0);
    for (let i = 0; i < 6000; i++) buckets[Math.floor(phaseMs(newId(), 'local', interval) / 10_000)]++;
    for (const n of buckets) assert.ok(n > 800 && n < 1200, `uneven spread ${buckets}`);
  });

  it('a dropped slot moves well away, stays inside the interval, and repeated moves never come back near', () => {
    const interval = 10_000;
    const visited = [7_000];
    for (let i = 0; i < 8; i++) visited.push(movedPhaseMs(visited.at(-1)!, interval));
    assert.equal(visited[1], 820, '0.382 of the interval later, wrapped');
    for (const p of visited) assert.ok(Number.isInteger(p) && p >= 0 && p < interval);
    for (let i = 0; i < visited.length; i++) {
      for (let j = i + 1; j < visited.length; j++) {
        const d = Math.abs(visited[i]! - visited[j]!);
        assert.ok(Math.min(d, interval - d) >= 500, `moves ${i} and ${j} land ${d} ms apart`);
      }
    }
  });

  it('shards come from the random tail of the id and cover every shard', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 5000; i++) seen.add(shardOf(newId()));
    assert.equal(seen.size, SHARD_COUNT);
    assert.equal(shardOf('0190b6a0-0000-7000-8000-00000000ffff'), 0xffff % SHARD_COUNT);
  });
});

describe('scheduler: hand-out', () => {
  const region = (id: string, default_selected: boolean): OperatorRegionT => ({
    id, name: id, city: null, country_code: null, continent: null, latitude: null, longitude: null,
    enabled: true, default_selected, flow_capable: false,
  } as OperatorRegionT);
  const catalog = [region('a', false), region('b', true), region('c', false), region('local', true)];

  it('the region cap keeps default-selected regions first, then by id; disabled ones drop', () => {
    assert.deepEqual(regionsAtHandOut(['c', 'a', 'local', 'b'], catalog, 2), ['b', 'local']);
    assert.deepEqual(regionsAtHandOut(['c', 'a', 'local', 'b'], catalog, 3), ['b', 'local', 'a']);
    assert.deepEqual(regionsAtHandOut(['gone', 'c'], catalog, null), ['c']);
    assert.deepEqual(regionsAtHandOut(['gone'], catalog, 5), [], 'left with only dropped regions: unmonitored');
  });

  it('a monitor is handed out at its plan\'s floor and region cap; when the plan lookup fails it runs as stored, with a warning', async () => {
    const row: MonitorRow = {
      id: newId(), org_id: newId(), account_id: newId(), kind: 'http', check_spec: { type: 'http', url: 'https://example.com/' },
      interval_secs: 30, regions: ['c', 'a', 'local', 'b'], variable_refs: [], runnable: true,
    };
    const warnings: unknown[] = [];
    const deps = (forAccount: PlanService['forAccount']): HandOutDeps => ({
      plans: { forAccount } as PlanService, sealer: {} as Sealer, catalog, log: { warn: (...args: unknown[]) => void warnings.push(args) } as HandOutDeps['log'],
    });
    const planned = await toMonitor(row, deps(async () => ({ caps: { min_check_interval_secs: 60, max_regions: 2 } }) as never));
    assert.deepEqual([planned!.intervalMs, planned!.regions], [60_000, ['b', 'local']]);
    assert.equal(warnings.length, 0);
    const stored = await toMonitor(row, deps(async () => { throw new Error('plans unavailable'); }));
    assert.deepEqual([stored!.intervalMs, stored!.regions], [30_000, ['b', 'local', 'a', 'c']], 'the stored interval, every enabled stored region');
    assert.equal(warnings.length, 1);
    assert.match(JSON.stringify(warnings[0]), /plan lookup failed/);
  });

  it('the throttle keys on host and port, and holds the cap', () => {
    assert.equal(hostPortOf({ type: 'http', url: 'https://Example.com/x' } as never), 'example.com:443');
    assert.equal(hostPortOf({ type: 'http', url: 'http://example.com:8080/' } as never), 'example.com:8080');
    assert.equal(hostPortOf({ type: 'tcp', host: 'db.example', port: 5432 } as never), 'db.example:5432');
    assert.equal(hostPortOf({ type: 'domain_expiry', domain: 'example.com' } as never), null);
    const throttle = new HostThrottle(2);
    assert.ok(throttle.acquire('k'));
    assert.ok(throttle.acquire('k'));
    assert.equal(throttle.acquire('k'), false, 'a third in flight is dropped');
    assert.ok(throttle.acquire('other'));
    throttle.release('k');
    assert.ok(throttle.acquire('k'));
  });

  it('the heap pops in due order', () => {
    const heap = new DueHeap();
    const dues = Array.from({ length: 500 }, () => Math.floor(Math.random() * 1e6));
    dues.forEach((due, i) => heap.push({ due, key: String(i), gen: 0 }));
    const out: number[] = [];
    for (let e = heap.pop(); e; e = heap.pop()) out.push(e.due);
    assert.deepEqual(out, [...dues].sort((a, b) => a - b));
  });
});
