// The heartbeat rule, pure (monitoring-api.md, "Heartbeat monitor" transitions).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPing, dueAt, evaluate, PENDING, resume, signalOfExitCode, type HeartbeatState, type Ping } from '../../src/heartbeat/verdict.js';

const MIN = 60_000;
const timing = { period: 10 * MIN, grace: 2 * MIN, max_runtime: 5 * MIN };
const T0 = Date.parse('2026-11-23T10:00:00Z');

/** The state after `pings` in order, and every result they wrote. */
function run(pings: Array<Partial<Ping> & { at: number }>, from: HeartbeatState = PENDING) {
  let state = from;
  const results = [];
  for (const p of pings) {
    const out = applyPing(state, { signal: 'success', exitCode: null, ...p });
    state = out.state;
    if (out.result) results.push(out.result);
  }
  return { state, results };
}

describe('heartbeat verdict', () => {
  it('the first ping of any signal ends pending; a routine success writes no result', () => {
    const { state, results } = run([{ at: T0 }, { at: T0 + MIN }, { at: T0 + 2 * MIN }]);
    assert.equal(state.status, 'up');
    assert.deepEqual(results, [{ status: 'up', error: null, at: T0 }]);
    assert.equal(state.firstPingAt, T0);
    assert.equal(state.lastSuccessAt, T0 + 2 * MIN);
    const started = run([{ at: T0, signal: 'start' }]);
    assert.equal(started.state.status, 'up', 'a first /start also ends pending');
    assert.equal(started.state.windowFrom, T0);
  });

  it('a fail first ping is down at once', () => {
    const { state, results } = run([{ at: T0, signal: 'fail' }]);
    assert.equal(state.status, 'down');
    assert.deepEqual(results, [{ status: 'down', error: 'the job reported a failure', at: T0 }]);
  });

  it('a fail after successes is down at once; more fails write nothing; a success comes back up', () => {
    const { state, results } = run([{ at: T0 }, { at: T0 + MIN, signal: 'fail', exitCode: 3 }, { at: T0 + 2 * MIN, signal: 'fail' }, { at: T0 + 3 * MIN }]);
    assert.deepEqual(results.map((r) => [r.status, r.error]), [['up', null], ['down', 'the job exited with code 3'], ['up', null]]);
    assert.equal(state.lastFailAt, T0 + 2 * MIN);
    assert.equal(state.lastExitCode, 3, 'only an exit-code ping sets the code');
    assert.equal(state.windowFrom, T0 + 3 * MIN, 'the success restarted the silence clock');
  });

  it('exit code 0 is a success and any other a failure', () => {
    assert.equal(signalOfExitCode(0), 'success');
    assert.equal(signalOfExitCode(1), 'fail');
    assert.equal(signalOfExitCode(255), 'fail');
  });

  it('/start does not advance the window; start then finish gives the run a duration', () => {
    const up = run([{ at: T0 }]).state;
    const started = applyPing(up, { signal: 'start', exitCode: null, at: T0 + 5 * MIN });
    assert.equal(started.state.windowFrom, T0);
    assert.equal(started.state.runStartedAt, T0 + 5 * MIN);
    assert.equal(started.result, null);
    const finished = applyPing(started.state, { signal: 'success', exitCode: 0, at: T0 + 7 * MIN });
    assert.equal(finished.runMs, 2 * MIN);
    assert.equal(finished.state.runStartedAt, null);
    assert.equal(applyPing(finished.state, { signal: 'success', exitCode: null, at: T0 + 8 * MIN }).runMs, null, 'no start, no duration');
  });

  it('silence past period + grace is down, dated to the deadline; not a moment before', () => {
    const up = run([{ at: T0 }]).state;
    const deadline = T0 + 12 * MIN;
    assert.equal(dueAt(up, timing), deadline);
    assert.equal(evaluate(up, timing, deadline), null);
    const judged = evaluate(up, timing, deadline + 1)!;
    assert.equal(judged.state.status, 'down');
    assert.equal(judged.result.at, deadline);
    assert.match(judged.result.error!, /period \+ grace/);
    assert.equal(evaluate(judged.state, timing, deadline + 10 * MIN), null, 'a down heartbeat is not judged again');
    assert.equal(evaluate(PENDING, timing, deadline * 2), null, 'pending is not evaluated');
  });

  it('a /start that outlives max_runtime is down; without max_runtime or /start it does nothing', () => {
    const started = run([{ at: T0 }, { at: T0 + MIN, signal: 'start' }]).state;
    assert.equal(dueAt(started, timing), T0 + 6 * MIN);
    const judged = evaluate(started, timing, T0 + 6 * MIN + 1)!;
    assert.equal(judged.result.at, T0 + 6 * MIN);
    assert.match(judged.result.error!, /max_runtime/);
    assert.equal(evaluate(started, { ...timing, max_runtime: null }, T0 + 6 * MIN + 1), null);
    assert.equal(dueAt(run([{ at: T0 }]).state, timing), T0 + 12 * MIN, 'no open run: only the silence deadline');
  });

  it('resume: a pinged heartbeat is up with a full window from the resume; a never-pinged one stays pending', () => {
    const down = run([{ at: T0, signal: 'fail' }]).state;
    const resumed = resume({ ...down, runStartedAt: T0 }, T0 + 60 * MIN);
    assert.equal(resumed.state.status, 'up');
    assert.equal(resumed.state.windowFrom, T0 + 60 * MIN);
    assert.equal(resumed.state.runStartedAt, null);
    assert.deepEqual(resumed.result, { status: 'up', error: null, at: T0 + 60 * MIN });
    const wasUp = resume(run([{ at: T0 }]).state, T0 + 60 * MIN);
    assert.equal(wasUp.result, null, 'up stays up: no result');
    assert.equal(wasUp.state.windowFrom, T0 + 60 * MIN);
    assert.deepEqual(resume(PENDING, T0), { state: PENDING, result: null });
  });
});
