// Shared parts of the property-based body tests: odd values, generic mutations of any JSON object,
// payloads built from a valid body, and the envelope every non-2xx answer obeys.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CODES } from '../../src/shared/errors.js';

const CODES = new Set<string>(ERROR_CODES);
const WHOLE_BODY = new Set(['INVALID_JSON', 'INVALID_CONTENT_TYPE']);
const STATE_CODES = new Set(['CONFLICT', 'MAINTENANCE_CANCELLED']);
export const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 250);

export type Body = Record<string, unknown>;

/** The envelope rules every non-2xx answer obeys; a body error names its field (the empty object aside). */
export function assertEnvelope(res: LightMyRequestResponse, what: string, sent: unknown): void {
  assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode} ${res.body}`);
  if (res.statusCode < 300) return;
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', what);
  const { error } = res.json() as { error: { code: string; message: string; field?: string } };
  assert.ok(CODES.has(error.code), `${what}: unknown code ${error.code}`);
  assert.equal(typeof error.message, 'string', what);
  if (res.statusCode === 404 || res.statusCode === 413) return;
  // Refusals of the resource's state, not of an input: a window already ended or cancelled.
  if (error.code === 'QUOTA_EXCEEDED' || STATE_CODES.has(error.code)) return;
  // A body that is not valid JSON, or not an object at all, is refused whole.
  const notAnObject = typeof sent !== 'object' || sent === null || Array.isArray(sent);
  if (WHOLE_BODY.has(error.code) && (notAnObject || !error.field)) return;
  const emptyObject = !notAnObject && Object.keys(sent as object).length === 0;
  if (emptyObject && error.code === 'VALIDATION_FAILED') return;
  assert.ok(typeof error.field === 'string' && error.field.length > 0, `${what}: ${res.statusCode} without field: ${res.body}`);
}

// ---------------------------------------------------------------- odd values

const HUGE = 'a'.repeat(70_000);
export const oddString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000b', '\uD800', '\uDFFF', '\u202E', '\u200B', '\uFEFF', '\u00AD', '\u0007', '\t', '\n', '\r\n',
    '𝕂𝕖𝕖𝕡', 'é', 'e\u0301', '__proto__', 'constructor', 'prototype', '***', '{{', '{{}}', '{{missing_var}}', '{{fuzz_var}}',
    '%00', '%', '../', 'null', '0', '-1', HUGE, '\u0000'.repeat(300), '😀'.repeat(2000),
  ),
);
const oddKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'id', 'created_at', 'write_source', 'type'));
export const oddNumber = fc.oneof(
  fc.integer(), fc.double({ noNaN: true }),
  fc.constantFrom(0, -1, 1.5, -0, 2 ** 31, 2 ** 53, -(2 ** 53), 1e20, 1e300, Number.MAX_SAFE_INTEGER + 2, 0.1, 59, 61, 1801, 86401, 31 * 86400 + 1, 65536, 600, 99, 1000, 1001),
);
export const wrongValue = fc.oneof(
  oddNumber, fc.boolean(), fc.constant(null), oddString,
  fc.array(fc.anything(), { maxLength: 3 }), fc.dictionary(oddKey, fc.anything(), { maxKeys: 3 }),
);
/** A deep, narrow nesting of arrays and objects. */
const deep = fc.integer({ min: 50, max: 300 }).map((depth) => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { x: v };
  return v;
});
export const uuid = fc.uuid();

export const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
export const compact = (o: Body): Body => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

// ---------------------------------------------------------------- mutations

export type Mutation = (body: Body) => unknown;
/** Generated values can be shared between runs (constants, shrinking): mutate and insert copies only. */
const copy = <T>(v: T): T => (typeof v === 'object' && v !== null ? structuredClone(v) : v);
export const setKey = (b: Body, k: string, v: unknown) => { Object.defineProperty(b, k, { value: copy(v), enumerable: true, writable: true, configurable: true }); return b; };
const atKey = (valueArb: fc.Arbitrary<unknown>) => fc.tuple(fc.nat(), valueArb).map(([i, v]): Mutation => (b) => {
  const keys = Object.keys(b); if (keys.length) b[keys[i % keys.length]!] = copy(v); return b;
});

/** Generic mutations of one object: drop a key, add an unknown one, replace a value with junk. */
export const genericMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map((i): Mutation => (b) => { const keys = Object.keys(b); if (keys.length) delete b[keys[i % keys.length]!]; return b; }),
  fc.tuple(oddKey, fc.anything()).map(([k, v]): Mutation => (b) => setKey(b, k, v)),
  atKey(wrongValue), atKey(deep), atKey(oddString), atKey(oddNumber), atKey(fc.anything()),
  fc.constant<Mutation>(() => ({})),
);

function nestedObjects(value: unknown, out: Body[] = []): Body[] {
  if (Array.isArray(value)) value.forEach((v) => nestedObjects(v, out));
  else if (typeof value === 'object' && value !== null) {
    out.push(value as Body);
    Object.values(value).forEach((v) => nestedObjects(v, out));
  }
  return out;
}

/** One to three mutations of a valid body: generic ones at a random nested object (check, steps, expected_status...), field-aware ones at the top. */
const mutate = (valid: fc.Arbitrary<Body>, topLevel: fc.Arbitrary<Mutation>) => fc.tuple(
  valid,
  fc.array(fc.tuple(fc.nat(), fc.oneof({ weight: 2, arbitrary: genericMutation.map((m) => ({ nested: true, m })) }, { weight: 3, arbitrary: topLevel.map((m) => ({ nested: false, m })) })), { minLength: 1, maxLength: 3 }),
).map(([start, steps]) => {
  let body: unknown = copy(start);
  for (const [where, { nested, m }] of steps) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) break;
    const objects = nested ? nestedObjects(body) : [body as Body];
    const target = objects[where % objects.length]!;
    const result = m(target);
    if (target === body) body = result;
  }
  return body;
});

const parsed = (text: string): unknown => { try { return JSON.parse(text); } catch { return undefined; } };

/** A raw payload: a valid body, a mutated one, or random JSON / text. */
export const payload = (valid: fc.Arbitrary<Body>, topLevel: fc.Arbitrary<Mutation>) => fc.oneof(
  { weight: 3, arbitrary: valid.map((b) => JSON.stringify(b)) },
  { weight: 10, arbitrary: mutate(valid, topLevel).map((b) => JSON.stringify(b) ?? '') },
  { weight: 1, arbitrary: fc.anything({ withNullPrototype: true, maxDepth: 3 }).map((b) => JSON.stringify(b) ?? 'undefined') },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
).map((text) => ({ text, sent: parsed(text) }));

export const outcome = (res: LightMyRequestResponse) => res.statusCode < 300 ? 'ok' : `${res.statusCode} ${(res.json() as { error: { code: string } }).error.code}`;
const classOf = (o: string) => (o === 'ok' ? 'ok' : o.slice(0, 3));
export function assertReached(seen: Set<string>, route: string): void {
  const classes = new Set([...seen].map(classOf));
  for (const want of ['ok', '400', '422']) assert.ok(classes.has(want), `${route} never gave ${want}: ${[...seen].join(', ')}`);
}

