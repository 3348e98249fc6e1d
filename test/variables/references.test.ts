import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/shared/errors.js';
import { checkReferences, findReferences, substituteReferences } from '../../src/variables/index.js';

describe('findReferences', () => {
  it('finds {{key}} references, each once, in order of first appearance', () => {
    assert.deepEqual(findReferences('https://{{host}}/v1?k={{api_key}}&h={{host}}'), ['host', 'api_key']);
    assert.deepEqual(findReferences('no references here'), []);
    assert.deepEqual(findReferences(''), []);
  });

  it('allows spaces (only spaces) inside the braces', () => {
    assert.deepEqual(findReferences('{{ token }} {{  b}} {{c  }}'), ['token', 'b', 'c']);
    assert.deepEqual(findReferences('{{\ttoken}} {{\ntoken\n}}'), []);
  });

  it('treats any identifier-like name as a reference, so an invalid key fails to resolve', () => {
    assert.deepEqual(findReferences('{{API_KEY}} {{9lives}}'), ['API_KEY', '9lives']);
  });

  it('leaves other brace content alone', () => {
    assert.deepEqual(findReferences('{{}} {{ $json.x }} {{a.b}} {{a-b}} {single} {{ a b }}'), []);
  });

  it('finds a reference wrapped in extra braces', () => {
    assert.deepEqual(findReferences('{"x": "{{{k}}}"}'), ['k']);
  });
});

describe('substituteReferences', () => {
  it('replaces known references and leaves unknown ones as written', () => {
    const values = new Map([['host', 'example.com'], ['token', '$1 & $&']]);
    assert.equal(substituteReferences('https://{{ host }}/{{host}}?t={{token}}&u={{nope}}', values),
      'https://example.com/example.com?t=$1 & $&&u={{nope}}');
  });
});

describe('checkReferences', () => {
  const variables = [{ key: 'host', is_secret: false }, { key: 'token', is_secret: true }];

  const failure = (fn: () => void): AppError => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof AppError);
      return err;
    }
    assert.fail('expected UNRESOLVED_VARIABLE');
  };

  it('accepts resolved references, secrets where allowed, and empty or missing texts', () => {
    checkReferences({
      variables,
      texts: [
        { field: 'check.url', text: 'https://{{host}}/', secretAllowed: false },
        { field: 'check.headers.Authorization', text: 'Bearer {{ token }}', secretAllowed: true },
        { field: 'check.body', text: null, secretAllowed: true },
        { field: 'check.expected_body_contains', text: undefined, secretAllowed: false },
        { field: 'check.url', text: '', secretAllowed: false },
      ],
    });
  });

  it('is 422 UNRESOLVED_VARIABLE naming the field of a key the org does not have', () => {
    const err = failure(() => checkReferences({
      variables,
      texts: [
        { field: 'check.url', text: 'https://{{host}}/', secretAllowed: false },
        { field: 'check.headers.X-Api', text: '{{missing}}', secretAllowed: true },
      ],
    }));
    assert.equal(err.status, 422);
    assert.equal(err.code, 'UNRESOLVED_VARIABLE');
    assert.equal(err.extra.field, 'check.headers.X-Api');
    assert.match(err.message, /missing/);
  });

  it('is 422 UNRESOLVED_VARIABLE for a secret where secrets are not allowed', () => {
    const err = failure(() => checkReferences({
      variables,
      texts: [{ field: 'check.url', text: 'https://{{host}}/?t={{token}}', secretAllowed: false }],
    }));
    assert.equal(err.code, 'UNRESOLVED_VARIABLE');
    assert.equal(err.extra.field, 'check.url');
    assert.match(err.message, /secret/);
  });

  it('refuses an identifier-like name that is not a valid key, and any reference when the org has no variables', () => {
    assert.equal(failure(() => checkReferences({ variables, texts: [{ field: 'check.body', text: '{{HOST}}', secretAllowed: true }] })).extra.field, 'check.body');
    assert.equal(failure(() => checkReferences({ variables: [], texts: [{ field: 'check.url', text: '{{host}}', secretAllowed: false }] })).code, 'UNRESOLVED_VARIABLE');
  });
});
