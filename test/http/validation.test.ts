// Unit tests of the request validator: JSON-pointer to field paths, and which error a failed body reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type, type TSchema } from '@sinclair/typebox';
import { AppError } from '../../src/shared/errors.js';
import { discriminated } from '../../src/http/schema-helpers.js';
import { findUnstorableValue, pointerToField, validatorCompiler } from '../../src/http/validation.js';

describe('pointerToField', () => {
  it('turns a JSON pointer into a dotted path with array indexes', () => {
    assert.equal(pointerToField(''), '');
    assert.equal(pointerToField('/name'), 'name');
    assert.equal(pointerToField('/check/type'), 'check.type');
    assert.equal(pointerToField('/check/steps/1/selector'), 'check.steps[1].selector');
    assert.equal(pointerToField('/copies/0/address'), 'copies[0].address');
    assert.equal(pointerToField('/matrix/0/12'), 'matrix[0][12]');
    assert.equal(pointerToField('/0/name'), '[0].name');
  });
  it('unescapes ~1 and ~0 and keeps map keys as they are', () => {
    assert.equal(pointerToField('/check/headers/X-Api~1Key'), 'check.headers.X-Api/Key');
    assert.equal(pointerToField('/a~0b/c~01'), 'a~b.c~1');
    assert.equal(pointerToField('/headers/ü key'), 'headers.ü key');
  });
});

/** Validates `data` as a body against `schema`; returns the AppError, or undefined when valid. */
function check(schema: TSchema, data: unknown, httpPart = 'body'): AppError | undefined {
  const validate = validatorCompiler({ schema, method: 'POST', url: '/x', httpPart }) as (d: unknown) => { error?: Error; value?: unknown };
  const result = validate(data);
  if (!result.error) return undefined;
  assert.ok(result.error instanceof AppError);
  return result.error;
}

const Http = Type.Object({ type: Type.Literal('http'), url: Type.String({ minLength: 1 }) }, { additionalProperties: false });
const Tcp = Type.Object({ type: Type.Literal('tcp'), host: Type.String(), port: Type.Integer({ minimum: 1, maximum: 65535 }) }, { additionalProperties: false });
const Body = Type.Object({
  name: Type.String({ maxLength: 10 }),
  city: Type.Optional(Type.Union([Type.String({ maxLength: 5 }), Type.Null()])),
  check: Type.Optional(Type.Union([Http, Tcp])),
  tags: Type.Optional(Type.Array(Type.String(), { maxItems: 2 })),
}, { additionalProperties: false });

describe('validatorCompiler on bodies', () => {
  it('accepts a valid body and applies defaults without coercing', () => {
    assert.equal(check(Body, { name: 'a', check: { type: 'tcp', host: 'h', port: 1 } }), undefined);
    const e = check(Body, { name: 7 });
    assert.equal(e?.status, 400);
    assert.equal(e?.extra.field, 'name');
  });

  it('reports an unknown key with its path and the keys its object accepts', () => {
    const e = check(Body, { name: 'a', check: { type: 'tcp', host: 'h', port: 1, tls: true } });
    assert.deepEqual([e?.status, e?.code, e?.extra.field, e?.extra.allowed], [422, 'INVALID_JSON', 'check.tls', ['type', 'host', 'port']]);
  });

  it('names an unknown key even when a required field is missing too (Conventions 7)', () => {
    const top = check(Body, { bogus: 1 });
    assert.deepEqual([top?.status, top?.code, top?.extra.field, top?.extra.allowed], [422, 'INVALID_JSON', 'bogus', ['name', 'city', 'check', 'tags']]);
    const nested = check(Body, { name: 'a', check: { type: 'http', bogus: 1 } });
    assert.deepEqual([nested?.status, nested?.code, nested?.extra.field, nested?.extra.allowed], [422, 'INVALID_JSON', 'check.bogus', ['type', 'url']]);
    const behindType = check(Body, { name: 7, check: { type: 'tcp', host: 'h', port: 1, tls: true } });
    assert.deepEqual([behindType?.code, behindType?.extra.field], ['INVALID_JSON', 'check.tls']);
    const tagged = Type.Object({ name: Type.String(), check: discriminated('type', [Http, Tcp]) }, { additionalProperties: false });
    const inTagged = check(tagged, { check: { type: 'http', bogus: 1 } });
    assert.deepEqual([inTagged?.status, inTagged?.code, inTagged?.extra.field, inTagged?.extra.allowed], [422, 'INVALID_JSON', 'check.bogus', ['type', 'url']]);
    const nullable = Type.Object({ a: Type.Union([Type.Object({ b: Type.String() }, { additionalProperties: false }), Type.Null()]) }, { additionalProperties: false });
    assert.deepEqual([check(nullable, { a: { c: 1 } })?.code, check(nullable, { a: { c: 1 } })?.extra.field], ['INVALID_JSON', 'a.c']);
  });

  it('does not take a key a sibling branch of a union lacks for an unknown key', () => {
    const e = check(Body, { name: 'a', check: { type: 'tcp', host: 'h', port: 0 } });
    assert.deepEqual([e?.status, e?.code, e?.extra.field], [400, 'VALIDATION_FAILED', 'check.port']);
    const missing = check(Body, { name: 'a', check: { type: 'http' } });
    assert.deepEqual([missing?.status, missing?.code, missing?.extra.field], [400, 'VALIDATION_FAILED', 'check.url']);
  });

  it('follows the discriminator of a union to the branch the client meant', () => {
    const e = check(Body, { name: 'a', check: { type: 'tcp', host: 'h', port: 0 } });
    assert.deepEqual([e?.status, e?.code, e?.extra.field], [400, 'VALIDATION_FAILED', 'check.port']);
    const missing = check(Body, { name: 'a', check: { type: 'tcp', host: 'h' } });
    assert.equal(missing?.extra.field, 'check.port');
    const http = check(Body, { name: 'a', check: { type: 'http', url: '' } });
    assert.equal(http?.extra.field, 'check.url');
  });

  it('names the discriminator when it matches no branch, listing the accepted values', () => {
    const e = check(Body, { name: 'a', check: { type: 'smtp', host: 'h' } });
    assert.deepEqual([e?.status, e?.code, e?.extra.field], [400, 'VALIDATION_FAILED', 'check.type']);
    assert.match(e!.message, /"http", "tcp"/);
    const absent = check(Body, { name: 'a', check: { host: 'h' } });
    assert.deepEqual([absent?.code, absent?.extra.field], ['VALIDATION_FAILED', 'check.type']);
    const scalar = check(Body, { name: 'a', check: 'http' });
    assert.deepEqual([scalar?.code, scalar?.extra.field], ['VALIDATION_FAILED', 'check']);
  });

  it('names a key no branch accepts as unknown even when no branch is named', () => {
    const tagged = Type.Object({ name: Type.String(), check: discriminated('type', [Http, Tcp]) }, { additionalProperties: false });
    for (const inner of [{ foo: 1 }, { type: 'smtp', foo: 1 }, { host: 'h', foo: 1 }]) {
      const e = check(tagged, { name: 'a', check: inner });
      assert.deepEqual([e?.status, e?.code, e?.extra.field, e?.extra.allowed], [422, 'INVALID_JSON', 'check.foo', ['type', 'url', 'host', 'port']], JSON.stringify(inner));
    }
    const topLevel = check(discriminated('type', [Http, Tcp]), { name: 'x', check: {} });
    assert.deepEqual([check(tagged, { name: 'a', check: { host: 'h' } })?.code], ['VALIDATION_FAILED'], 'keys some kind accepts: the missing tag is the error');
    assert.deepEqual([topLevel?.code, topLevel?.extra.field], ['INVALID_JSON', 'name'], 'a check spec as the whole body: the key is named at the top');
  });

  it('explains a nullable field by the branch that fits its type', () => {
    const long = check(Body, { name: 'a', city: 'Amsterdam' });
    assert.equal(long?.extra.field, 'city');
    assert.match(long!.message, /5 characters/);
    const wrong = check(Body, { name: 'a', city: 5 });
    assert.equal(wrong?.extra.field, 'city');
    assert.match(wrong!.message, /string or null/);
  });

  it('treats a body of the wrong JSON type as INVALID_JSON and an empty object as a whole-body failure', () => {
    for (const data of [[], 'x', 3, null, true]) {
      const e = check(Body, data);
      assert.deepEqual([e?.status, e?.code], [400, 'INVALID_JSON'], JSON.stringify(data));
    }
    const e = check(Type.Object({ a: Type.Optional(Type.String()) }, { additionalProperties: false, minProperties: 1 }), {});
    assert.deepEqual([e?.status, e?.code, e?.extra.field], [400, 'VALIDATION_FAILED', undefined]);
  });

  it('names array items by index', () => {
    const e = check(Body, { name: 'a', tags: ['x', 5] });
    assert.equal(e?.extra.field, 'tags[1]');
    assert.equal(check(Body, { name: 'a', tags: ['x', 'y', 'z'] })?.extra.field, 'tags');
  });
});

describe('values PostgreSQL cannot store', () => {
  const fieldOf = (data: unknown) => findUnstorableValue(data)?.field;

  it('finds NUL characters and unpaired surrogates in values and keys, by path', () => {
    assert.equal(findUnstorableValue({ a: 'fine 𝕂 ü', b: [1, null, { c: 'ok' }] }), undefined);
    assert.equal(fieldOf({ a: 'x\u0000y' }), 'a');
    assert.equal(fieldOf({ a: [{ b: 'ok' }, { b: '\uD800' }] }), 'a[1].b');
    assert.equal(fieldOf({ a: { 'k\uDC00': 'v' } }), 'a.k?');
    let deep: unknown = '\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(fieldOf({ deep })?.slice(0, 10), 'deep[0][0]');
  });

  it('finds numbers that are not finite, by path', () => {
    assert.deepEqual(findUnstorableValue({ a: [1, { b: Infinity }] }), { field: 'a[1].b', number: true });
    assert.equal(fieldOf({ a: -Infinity }), 'a');
    assert.equal(findUnstorableValue({ a: Number.MAX_VALUE, b: -0 }), undefined);
  });

  it('rejects such text in a body as 400 VALIDATION_FAILED naming the field, and in a path as 404', () => {
    const e = check(Body, { name: 'a\u0000' });
    assert.deepEqual([e?.status, e?.code, e?.extra.field], [400, 'VALIDATION_FAILED', 'name']);
    assert.equal(check(Body, { name: 'a', city: '\uDBFF' })?.extra.field, 'city');
    assert.equal(check(Body, { name: '\uD83D\uDE00' }), undefined, 'a paired surrogate is fine');
    assert.equal(check(Type.Object({ id: Type.String() }), { id: 'a\u0000' }, 'params')?.status, 404);
  });

  it('rejects Infinity (JSON or query `1e400`), which ajv takes for an integer, as 400 VALIDATION_FAILED naming the field', () => {
    const body = check(Type.Object({ n: Type.Integer() }), JSON.parse('{"n": 1e400}'));
    assert.deepEqual([body?.status, body?.code, body?.extra.field], [400, 'VALIDATION_FAILED', 'n']);
    for (const text of ['1e400', '-1e400', 'Infinity']) {
      const query = check(Type.Object({ n: Type.Optional(Type.Number()) }), { n: text }, 'querystring');
      assert.deepEqual([query?.status, query?.code, query?.extra.field], [400, 'VALIDATION_FAILED', 'n'], text);
    }
  });
});

describe('validatorCompiler on other parts', () => {
  it('turns a bad path parameter into 404 and a bad query parameter into 400 with the field', () => {
    const params = check(Type.Object({ id: Type.String({ format: 'uuid' }) }), { id: 'nope' }, 'params');
    assert.deepEqual([params?.status, params?.code], [404, 'NOT_FOUND']);
    const query = check(Type.Object({ limit: Type.Integer({ maximum: 1000 }) }), { limit: '5000' }, 'querystring');
    assert.deepEqual([query?.status, query?.code, query?.extra.field], [400, 'VALIDATION_FAILED', 'limit']);
    assert.equal(check(Type.Object({ limit: Type.Integer() }), { limit: '50' }, 'querystring'), undefined, 'query strings are coerced');
  });

  it('reads a query number only as a plain decimal, never as Number() would', () => {
    const schema = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })), ratio: Type.Optional(Type.Number()) });
    for (const limit of ['0x10', '1e2', ' 10', '10 ', '+5', '1.0', '0b11', 'Infinity', '']) {
      const refused = check(schema, { limit }, 'querystring');
      assert.deepEqual([refused?.status, refused?.code, refused?.message, refused?.extra.field], [400, 'VALIDATION_FAILED', 'query parameter limit must be integer', 'limit'], JSON.stringify(limit));
    }
    for (const ratio of ['1e2', '.5', '5.', '0x1']) {
      assert.equal(check(schema, { ratio }, 'querystring')?.message, 'query parameter ratio must be number', ratio);
    }
    assert.equal(check(schema, { limit: '007', ratio: '-2.5' }, 'querystring'), undefined);
    assert.equal(check(schema, { limit: '-1' }, 'querystring')?.message, 'query parameter limit must be >= 1', 'a negative number is read, then held to its bounds');
  });

  it('names a single-valued query parameter given twice, rather than calling the list no integer', () => {
    const schema = Type.Object({ limit: Type.Optional(Type.Integer()), tag: Type.Optional(Type.String()), ids: Type.Optional(Type.Array(Type.String())) });
    for (const data of [{ limit: ['1', '2'] }, { tag: ['a', 'b'] }]) {
      const key = Object.keys(data)[0]!;
      const refused = check(schema, data, 'querystring');
      assert.deepEqual([refused?.status, refused?.code, refused?.message, refused?.extra.field], [400, 'VALIDATION_FAILED', `query parameter ${key} is given more than once`, key]);
    }
    assert.equal(check(schema, { ids: ['a', 'b'] }, 'querystring'), undefined, 'a list parameter takes several');
  });
});
