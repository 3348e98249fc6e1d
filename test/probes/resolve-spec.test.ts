// runnableSpec: what the scheduler, check-now and test-runs probe, or why a check cannot run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runnableSpec } from '../../src/probes/resolve-spec.js';
import type { CheckSpecT } from '../../src/targets/check-specs.js';

const http = (over: Record<string, unknown> = {}): CheckSpecT =>
  ({ type: 'http', url: 'https://example.com/{{path}}', method: 'GET', headers: { authorization: 'Bearer {{token}}' }, ...over }) as unknown as CheckSpecT;

describe('runnableSpec', () => {
  it('substitutes every reference in url, headers and body', () => {
    const out = runnableSpec(http({ body: '{"t":"{{token}}"}' }), ['path', 'token'], new Map([['path', 'health'], ['token', 'abc']]));
    assert.ok('spec' in out);
    const spec = out.spec as Extract<CheckSpecT, { type: 'http' }>;
    assert.equal(spec.url, 'https://example.com/health');
    assert.equal(spec.headers.authorization, 'Bearer abc');
    assert.equal(spec.body, '{"t":"abc"}');
  });

  it('leaves a spec without references as it is', () => {
    const spec = http({ url: 'https://example.com/', headers: {} });
    assert.deepEqual(runnableSpec(spec, [], new Map()), { spec });
  });

  it('is an error naming the references it cannot read, never a spec with {{key}} left in', () => {
    const out = runnableSpec(http(), ['path', 'token'], new Map([['path', 'health']]));
    assert.deepEqual(out, { unrunnable: { status: 'error', duration_ms: 0, error: 'variable {{token}} cannot be read: a secret sealed under a key that is no longer configured' } });
  });

  it('is an error when the stored credentials could not be opened', () => {
    const out = runnableSpec(null, [], new Map());
    assert.ok('unrunnable' in out);
    assert.equal(out.unrunnable.status, 'error');
    assert.match(out.unrunnable.error!, /stored credential/);
  });
});
