// Secrets a target echoes back are shown as `***` in results (src/probes/mask-secrets.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maskSecrets, secretTextsOf } from '../../src/probes/mask-secrets.js';
import type { CheckSpecT } from '../../src/targets/check-specs.js';

const http = (extra: Record<string, unknown> = {}) => ({ type: 'http', url: 'https://example.com/', headers: {}, ...extra }) as unknown as CheckSpecT;

describe('masking secrets in results', () => {
  it('masks stored credentials and substituted secret values, as sent and percent-encoded, longest first', () => {
    const texts = secretTextsOf(http({ bearer_token: 'tok-1234', basic_auth: ['admin', 'pa ss'] }), ['tok-1234-extended']);
    assert.deepEqual(texts, ['tok-1234-extended', 'tok-1234', 'pa%20ss', 'pa ss']);
    const masked = maskSecrets({ status: 'down', duration_ms: 3, error: 'echoed tok-1234-extended and pa ss',
      fields: { final_url: 'https://example.com/?a=pa%20ss', nested: [{ v: 'tok-1234' }], status_code: 302 } }, texts);
    assert.deepEqual(masked, { status: 'down', duration_ms: 3, error: 'echoed *** and ***',
      fields: { final_url: 'https://example.com/?a=***', nested: [{ v: '***' }], status_code: 302 } });
  });

  it('leaves the basic_auth user, values under 4 characters and a check without secrets alone', () => {
    assert.deepEqual(secretTextsOf(http({ basic_auth: ['admin', 'abc'] }), ['xyz']), []);
    const result = { status: 'up' as const, duration_ms: 1, error: null, fields: { final_url: 'https://example.com/' } };
    assert.equal(maskSecrets(result, []), result, 'the same object: no copy when nothing is secret');
  });
});
