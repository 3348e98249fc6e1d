// The incident rule, pure: confirmations, region policies, degraded and error, the recovery wait,
// a relapse inside it, and the dating of start and end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResultStatus } from '../../src/probes/types.js';
import { applyResult, regionsNeeded, type AlertRule, type MonitorState, type Transition } from '../../src/incidents/verdict.js';

const S = 1000;

/** Feeds `(region, status)` results 10 s apart from t=0; every transition with its result's index. */
function run(rule: AlertRule, results: [string, ResultStatus][]): { state: MonitorState; log: [number, Transition][] } {
  let state: MonitorState = { regions: {}, incident: null };
  const log: [number, Transition][] = [];
  results.forEach(([region, status], i) => {
    const out = applyResult(state, rule, region, status, i * 10 * S);
    state = out.state;
    for (const t of out.transitions) log.push([i, t]);
  });
  return { state, log };
}

const one = (extra: Partial<AlertRule> = {}): AlertRule => ({ confirmations: 2, policy: 'majority', recoveryPeriodMs: 0, regionCount: 1, ...extra });
const local = (...statuses: ResultStatus[]): [string, ResultStatus][] => statuses.map((s) => ['local', s]);

describe('incident rule', () => {
  it('clamps the region policy to the monitor\'s regions', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map((n) => regionsNeeded('majority', n)), [1, 2, 2, 3, 3]);
    assert.equal(regionsNeeded('any', 5), 1);
    assert.equal(regionsNeeded('all', 4), 4);
    assert.equal(regionsNeeded({ count: 9 }, 3), 3);
    assert.equal(regionsNeeded({ count: 2 }, 3), 2);
    assert.equal(regionsNeeded('all', 0), 1);
  });

  it('opens after alert_confirmations consecutive failures, dated to the first', () => {
    assert.deepEqual(run(one(), local('up', 'down', 'up', 'down')).log, [], 'no two in a row');
    assert.deepEqual(run(one(), local('up', 'down', 'down')).log, [[2, { kind: 'open', startedAt: 10 * S, regionsDown: 1 }]]);
    assert.deepEqual(run(one({ confirmations: 1 }), local('down')).log, [[0, { kind: 'open', startedAt: 0, regionsDown: 1 }]]);
  });

  it('treats degraded as answering and error as no evidence either way', () => {
    assert.deepEqual(run(one(), local('down', 'degraded', 'down')).log, []);
    assert.deepEqual(run(one(), local('down', 'error', 'down')).log, [[2, { kind: 'open', startedAt: 0, regionsDown: 1 }]], 'error does not break a failing streak');
    const { log } = run(one(), local('down', 'down', 'up', 'error', 'up'));
    assert.deepEqual(log.map(([i, t]) => [i, t.kind]), [[1, 'open'], [4, 'recovering'], [4, 'closed']], 'nor a passing one');
  });

  it('counts a streak only up to the confirmations, so a steady monitor changes nothing', () => {
    const rule = one({ confirmations: 3 });
    const { state } = run(rule, local('up', 'up', 'up', 'up', 'up'));
    assert.equal(state.regions.local!.passing, 3);
    const again = applyResult(state, rule, 'local', 'up', 99 * S);
    assert.equal(again.state.regions.local, state.regions.local, 'the same streak: nothing to write');
    assert.deepEqual(again.transitions, []);
  });

  it('fails a degraded state set by hand when the rule says so (manual monitors)', () => {
    const manual = one({ confirmations: 1, degradedFails: true });
    assert.deepEqual(run(manual, local('degraded', 'up')).log.map(([i, t]) => [i, t.kind]), [[0, 'open'], [1, 'recovering'], [1, 'closed']]);
  });

  it('closes after as many passes and the recovery period, dated to when the recovery began', () => {
    const rule = one({ recoveryPeriodMs: 30 * S });
    const { log, state } = run(rule, local('down', 'down', 'up', 'up', 'up', 'up', 'up'));
    assert.deepEqual(log, [
      [1, { kind: 'open', startedAt: 0, regionsDown: 1 }],
      [3, { kind: 'recovering', since: 20 * S }],
      [5, { kind: 'closed', endedAt: 20 * S }],
    ]);
    assert.equal(state.incident, null);
  });

  it('keeps the incident through a confirmed failure in the wait and records the stretch', () => {
    const rule = one({ recoveryPeriodMs: 60 * S });
    const { log, state } = run(rule, local('down', 'down', 'up', 'up', 'down', 'down', 'up', 'up'));
    assert.deepEqual(log, [
      [1, { kind: 'open', startedAt: 0, regionsDown: 1 }],
      [3, { kind: 'recovering', since: 20 * S }],
      [5, { kind: 'relapsed', stretch: { from: 20 * S, until: 40 * S } }],
      [7, { kind: 'recovering', since: 60 * S }],
    ]);
    assert.deepEqual(state.incident, { startedAt: 0, recoveringSince: 60 * S, recovered: [{ from: 20 * S, until: 40 * S }] });
  });

  it('needs the policy\'s regions to agree, and recovers once too few could still be failing', () => {
    const rule = one({ regionCount: 3, confirmations: 1 });
    assert.deepEqual(run(rule, [['a', 'down'], ['b', 'up'], ['c', 'up']]).log, [], 'one of three is not a majority');
    const { log } = run(rule, [['a', 'down'], ['b', 'down'], ['c', 'up'], ['a', 'up'], ['b', 'down']]);
    assert.deepEqual(log.map(([i, t]) => [i, t.kind]), [[1, 'open'], [3, 'recovering'], [3, 'closed']]);
    const all = run(one({ regionCount: 2, confirmations: 1, policy: 'all' }), [['a', 'down'], ['b', 'up'], ['b', 'down'], ['a', 'up']]);
    assert.deepEqual(all.log.map(([i, t]) => [i, t.kind]), [[2, 'open'], [3, 'recovering'], [3, 'closed']]);
    const any = run(one({ regionCount: 3, confirmations: 1, policy: 'any' }), [['a', 'down'], ['a', 'up'], ['b', 'up'], ['c', 'up']]);
    assert.deepEqual(any.log.map(([i, t]) => [i, t.kind]), [[0, 'open'], [3, 'recovering'], [3, 'closed']], 'any: up only when every region passes');
  });
});
