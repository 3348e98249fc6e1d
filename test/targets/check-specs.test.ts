// The check-spec schemas through the real body validator: defaults per kind, tagged-union errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { validatorCompiler } from '../../src/http/validation.js';
import { AppError } from '../../src/shared/errors.js';
import { CheckSpec, DEFAULT_EXPECTED_STATUS } from '../../src/targets/check-specs.js';

const validate = validatorCompiler({ schema: Type.Object({ check: CheckSpec }, { additionalProperties: false }), httpPart: 'body', url: '/x', method: 'POST' }) as
  (data: unknown) => { value?: { check: Record<string, unknown> }; error?: AppError };

function accept(check: object): Record<string, unknown> {
  const result = validate({ check: structuredClone(check) });
  assert.equal(result.error, undefined, result.error?.message);
  return result.value!.check;
}

function reject(check: object): AppError {
  const result = validate({ check });
  assert.ok(result.error instanceof AppError, 'expected a rejection');
  return result.error;
}

describe('check specs', () => {
  it('fills the documented defaults of each kind, and only that kind; an optional field left out is null', () => {
    assert.deepEqual(accept({ type: 'http', url: 'https://example.com' }), {
      type: 'http', url: 'https://example.com', method: 'GET', timeout: 10000, follow_redirects: true, max_redirects: 5,
      headers: {}, verify_tls: true, ip_version: 'any', expected_status: DEFAULT_EXPECTED_STATUS,
      expected_body_contains: null, body: null, basic_auth: null, bearer_token: null,
    });
    assert.deepEqual(accept({ type: 'dns', domain: 'example.com', record_type: 'A' }), {
      type: 'dns', domain: 'example.com', record_type: 'A', timeout: 5000, resolver: null, expected_contains: null, expected_records: null,
    });
    assert.deepEqual(accept({ type: 'tcp', host: 'example.com', port: 22 }), { type: 'tcp', host: 'example.com', port: 22, timeout: 5000, ip_version: 'any' });
    assert.deepEqual(accept({ type: 'ping', host: 'example.com' }), { type: 'ping', host: 'example.com', timeout: 5000 });
    assert.deepEqual(accept({ type: 'heartbeat' }), { type: 'heartbeat', period: 86_400_000, grace: 3_600_000, max_runtime: null });
    assert.deepEqual(accept({ type: 'manual' }), { type: 'manual' });
    assert.deepEqual(accept({ type: 'tls_cert', host: 'example.com' }), { type: 'tls_cert', host: 'example.com', port: 443, warn_days: 30, critical_days: 7, timeout: 10000, ip_version: 'any', server_name: null });
    assert.deepEqual(accept({ type: 'domain_expiry', domain: 'example.com' }), { type: 'domain_expiry', domain: 'example.com', warn_days: 30, critical_days: 7, timeout: 10000 });
    const flow = accept({ type: 'flow', start_url: 'https://example.com', steps: [{ op: 'assert_text', contains: 'Hi' }] });
    assert.equal(flow.timeout, 30000);
    assert.equal(flow.step_timeout, 5000);
    assert.deepEqual(flow.steps, [{ op: 'assert_text', contains: 'Hi', selector: null }]);
    assert.equal(DEFAULT_EXPECTED_STATUS.kind, 'range');
  });

  it("an unknown key inside the chosen kind is 422 naming its path and the kind's keys", () => {
    const err = reject({ type: 'tcp', host: 'example.com', port: 22, method: 'GET' });
    assert.equal(err.status, 422);
    assert.equal(err.code, 'INVALID_JSON');
    assert.equal(err.extra.field, 'check.method');
    assert.deepEqual(err.extra.allowed, ['type', 'host', 'port', 'timeout', 'ip_version']);
  });

  it('names nested flow step keys by index', () => {
    const err = reject({ type: 'flow', start_url: 'https://x.test', steps: [{ op: 'assert_url', contains: 'x' }, { op: 'click', selector: 'a', extra: 1 }] });
    assert.equal(err.extra.field, 'check.steps[1].extra');
    assert.deepEqual(err.extra.allowed, ['op', 'selector']);
  });

  it('an unknown or missing type names check.type', () => {
    const unknown = reject({ type: 'smtp', host: 'x' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.extra.field, 'check.type');
    assert.match(unknown.message, /"http".*"flow"/);
    const missing = reject({ host: 'x' });
    assert.equal(missing.extra.field, 'check.type');
  });

  it('a check, expected_status or step that is not an object is refused, never passed through', () => {
    for (const check of ['', 0, [], null, true]) {
      const result = validate({ check });
      assert.ok(result.error instanceof AppError, `check ${JSON.stringify(check)} must be refused`);
      assert.equal(result.error.extra.field, 'check');
    }
    assert.equal(reject({ type: 'http', url: 'https://x', expected_status: 200 } as object).extra.field, 'check.expected_status');
    assert.equal(reject({ type: 'flow', start_url: 'https://x.test', steps: ['click'] }).extra.field, 'check.steps[0]');
  });

  it('reports the error of the branch the tag names', () => {
    assert.equal(reject({ type: 'tcp', host: 'example.com', port: 0 }).extra.field, 'check.port');
    assert.equal(reject({ type: 'http' }).extra.field, 'check.url');
    assert.equal(reject({ type: 'flow', start_url: 'https://x.test', steps: [], timeout: 500 }).extra.field, 'check.steps');
    assert.equal(reject({ type: 'http', url: 'https://x', expected_status: { kind: 'exact', value: 99 } }).extra.field, 'check.expected_status.value');
  });
});
