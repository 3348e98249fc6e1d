// runnableSpec: what the scheduler, check-now and test-runs probe, or why a check cannot run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runnableSpec } from '../../src/probes/resolve-spec.js';
import type { CheckSpecT } from '../../src/targets/check-specs.js';
import { NO_VARIABLES, type OrgVariables } from '../../src/variables/index.js';

const vars = (values: Record<string, string>, secrets: string[] = []): OrgVariables => ({ values: new Map(Object.entries(values)), secrets: new Set(secrets) });

const http = (over: Record<string, unknown> = {}): CheckSpecT =>
  ({ type: 'http', url: 'https://example.com/{{path}}', method: 'GET', headers: { authorization: 'Bearer {{token}}' }, ...over }) as unknown as CheckSpecT;

describe('runnableSpec', () => {
  it('substitutes every reference in url, headers and body', () => {
    const out = runnableSpec(http({ body: '{"t":"{{token}}"}' }), ['path', 'token'], vars({ path: 'health', token: 'abc' }));
    assert.ok('spec' in out);
    const spec = out.spec as Extract<CheckSpecT, { type: 'http' }>;
    assert.equal(spec.url, 'https://example.com/health');
    assert.equal(spec.headers.authorization, 'Bearer abc');
    assert.equal(spec.body, '{"t":"abc"}');
    assert.equal(out.secretParts, undefined, 'no secret referenced');
  });

  it('names the headers (lower-cased) and says whether the body hold a secret, for the probe to keep them at the origin, and gives the values to mask', () => {
    const spec = http({ headers: { 'X-Api-Key': 'k={{ token }}', Accept: '{{path}}', 'X-None': 'plain' }, body: 'a={{token}}' });
    const out = runnableSpec(spec, ['path', 'token'], vars({ path: 'health', token: 'abc' }, ['token']));
    assert.ok('spec' in out);
    assert.deepEqual(out.secretParts, { headers: new Set(['x-api-key']), body: true, values: ['abc'] });
    const plainBody = runnableSpec(http({ headers: { 'X-Api-Key': '{{token}}' }, body: '{{path}}' }), ['path', 'token'], vars({ path: 'p', token: 't' }, ['token']));
    assert.ok('spec' in plainBody);
    assert.deepEqual(plainBody.secretParts, { headers: new Set(['x-api-key']), body: false, values: ['t'] });
  });

  it('leaves a spec without references as it is', () => {
    const spec = http({ url: 'https://example.com/', headers: {} });
    assert.deepEqual(runnableSpec(spec, [], NO_VARIABLES), { spec });
  });

  it('is an error naming the references it cannot read, never a spec with {{key}} left in', () => {
    const out = runnableSpec(http(), ['path', 'token'], vars({ path: 'health' }, ['token']));
    assert.deepEqual(out, { unrunnable: { status: 'error', duration_ms: 0, error: 'variable {{token}} cannot be read: a secret sealed under a key that is no longer configured' } });
  });

  it('is an error when the stored credentials could not be opened', () => {
    const out = runnableSpec(null, [], NO_VARIABLES);
    assert.ok('unrunnable' in out);
    assert.equal(out.unrunnable.status, 'error');
    assert.match(out.unrunnable.error!, /stored credential/);
  });
});
