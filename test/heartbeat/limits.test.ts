// Pure pieces of the ping endpoint: cadence advice, the per-token bucket, the output reader, the
// signal segment.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { cadenceOf } from '../../src/heartbeat/cadence.js';
import { outputText, readOutput } from '../../src/heartbeat/output.js';
import { PingRateLimiter } from '../../src/heartbeat/rate-limit.js';
import { parseSignal } from '../../src/heartbeat/ping-endpoint.js';
import { TestClock } from '../helpers/app.js';

const MIN = 60_000;
const every = (n: number, gapMs: number): number[] => Array.from({ length: n }, (_, i) => i * gapMs);

describe('cadence advice', () => {
  const timing = { period: 10 * MIN, grace: 5 * MIN };

  it('observed period is null until a second success, then the median gap', () => {
    assert.deepEqual(cadenceOf([], timing), { observedPeriodMs: null, advice: null });
    assert.deepEqual(cadenceOf([0], timing), { observedPeriodMs: null, advice: null });
    assert.equal(cadenceOf([0, 7 * MIN], timing).observedPeriodMs, 7 * MIN);
    assert.equal(cadenceOf([0, MIN, 3 * MIN, 13 * MIN], timing).observedPeriodMs, 2 * MIN, 'median of 1, 2, 10 minutes');
    assert.equal(cadenceOf([0, MIN, 3 * MIN], timing).observedPeriodMs, 1.5 * MIN, 'even count: mean of the middle two');
  });

  it('no advice before five successes, nor while the window fits', () => {
    assert.equal(cadenceOf(every(4, 30 * MIN), timing).advice, null);
    assert.equal(cadenceOf(every(5, 10 * MIN), timing).advice, null);
  });

  it('too_tight when the real cadence is slower than period + grace', () => {
    assert.deepEqual(cadenceOf(every(5, 15 * MIN + 1), timing).advice, { kind: 'too_tight', suggested_period_secs: 15 * 60 });
    assert.equal(cadenceOf(every(5, 15.5 * MIN), timing).advice?.suggested_period_secs, 16 * 60, 'to the nearest minute');
    assert.equal(cadenceOf(every(5, 15 * MIN), timing).advice, null, 'exactly period + grace fits');
    const noGrace = { period: MIN, grace: 0 };
    assert.deepEqual(cadenceOf(every(6, 71_000), noGrace).advice, { kind: 'too_tight', suggested_period_secs: 120 },
      'rounded up where the nearest minute would leave it too tight (71 s with no grace)');
    assert.equal(cadenceOf(every(6, 130_000), { period: MIN, grace: 20_000 }).advice?.suggested_period_secs, 120, 'the nearest minute, where the grace covers the rest');
  });

  it('too_loose when period + grace is at least four times the real cadence', () => {
    assert.deepEqual(cadenceOf(every(6, 3.75 * MIN), timing).advice, { kind: 'too_loose', suggested_period_secs: 4 * 60 });
    assert.equal(cadenceOf(every(6, 3.75 * MIN + 1), timing).advice, null);
    assert.equal(cadenceOf(every(6, 1000), timing).advice?.suggested_period_secs, 60, 'never below the 60 s period floor');
  });
});

describe('ping rate limit', () => {
  it('a burst of 10, then 1 per second, with the wait in whole seconds', () => {
    const clock = new TestClock();
    const limiter = new PingRateLimiter(clock);
    for (let i = 0; i < 10; i++) assert.equal(limiter.take('a'), 0, `ping ${i + 1} of the burst`);
    assert.equal(limiter.take('a'), 1);
    assert.equal(limiter.take('b'), 0, 'tokens have their own buckets');
    clock.advance(1_000);
    assert.equal(limiter.take('a'), 0);
    assert.ok(limiter.take('a') >= 1);
    clock.advance(60_000);
    for (let i = 0; i < 10; i++) assert.equal(limiter.take('a'), 0, 'refilled to the burst, no further');
    assert.ok(limiter.take('a') >= 1);
    clock.advance(5_000);
    assert.equal(limiter.take('c'), 0);
    clock.advance(-60_000);
    assert.equal(limiter.take('c'), 0, 'a clock stepped back does not drain a bucket');
  });
});

describe('ping signal segment', () => {
  it('knows success, start, fail and exit codes 0..255 only', () => {
    assert.deepEqual(parseSignal(undefined), { signal: 'success', exitCode: null });
    assert.deepEqual(parseSignal('success'), { signal: 'success', exitCode: null });
    assert.deepEqual(parseSignal('start'), { signal: 'start', exitCode: null });
    assert.deepEqual(parseSignal('fail'), { signal: 'fail', exitCode: null });
    assert.deepEqual(parseSignal('0'), { signal: 'success', exitCode: 0 });
    assert.deepEqual(parseSignal('255'), { signal: 'fail', exitCode: 255 });
    for (const bad of ['256', '-1', '007', '1.5', 'Success', 'ok', '', 'log']) assert.equal(parseSignal(bad), null, bad);
  });
});

describe('ping output', () => {
  const limits = { keepBytes: 8, readMaxBytes: 32, readMs: 200 };

  it('keeps the first bytes of a body read to the end', async () => {
    const body = new PassThrough();
    const read = readOutput(body, limits);
    body.write('hello ');
    body.end('world and more');
    assert.deepEqual(await read, { output: 'hello wo', complete: true });
  });

  it('a body past the read limit keeps no output', async () => {
    const body = new PassThrough();
    const read = readOutput(body, limits);
    body.write('x'.repeat(20));
    body.write('x'.repeat(20));
    assert.deepEqual(await read, { output: null, complete: false });
  });

  it('a body that trickles past the time limit keeps no output', async () => {
    const body = new PassThrough();
    const read = readOutput(body, limits);
    body.write('slow');
    assert.deepEqual(await read, { output: null, complete: false });
  });

  it('an empty body is no output; a character cut at the limit is dropped; NULs go', () => {
    assert.equal(outputText(Buffer.alloc(0)), null);
    assert.equal(outputText(Buffer.from('abcdefé').subarray(0, 8)), 'abcdefé', 'a whole character at the limit stays');
    assert.equal(outputText(Buffer.from('abcdefgé').subarray(0, 8)), 'abcdefg', 'the first byte of é is not kept as garbage');
    assert.equal(outputText(Buffer.from('a\u0000b')), 'ab');
  });
});
