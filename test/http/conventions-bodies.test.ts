// Conventions 7 (strict bodies) and the body half of "Errors": unknown and read-only keys, non-JSON
// bodies, content types, and schema failures, on the real app and store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { REQUEST_TIMEOUT_MS } from '../../src/app.js';
import { addRoute } from '../../src/http/route.js';
import { bearer, createTenantWithToken, OPERATOR_SECRET, startTestApp, type TestApp } from '../helpers/app.js';

const Step = Type.Object({ op: Type.String(), selector: Type.Optional(Type.String()) }, { additionalProperties: false });
const ProbeBody = Type.Object({
  name: Type.String({ minLength: 1 }),
  check: Type.Object({ type: Type.String({ enum: ['flow', 'http'] }), steps: Type.Array(Step) }, { additionalProperties: false }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  count: Type.Optional(Type.Integer({ minimum: 1 })),
}, { additionalProperties: false });

const JSON_CT = { 'content-type': 'application/json' };
const OP = { authorization: `Bearer ${OPERATOR_SECRET}` };
const valid = () => ({ name: 'journey', check: { type: 'flow', steps: [{ op: 'goto' }, { op: 'click', selector: '#buy' }] }, headers: { 'X-Anything-Goes': 'v' } });

function errorOf(res: LightMyRequestResponse): { code: string; message: string; field?: string; allowed?: string[] } {
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  return (res.json() as { error: { code: string; message: string; field?: string; allowed?: string[] } }).error;
}

describe('strict request bodies (Conventions 7)', () => {
  let t: TestApp;
  let received: unknown[] = [];
  const probe = (payload: unknown, headers: Record<string, string> = JSON_CT, method: InjectOptions['method'] = 'POST') =>
    t.inject({ method, url: '/api/v1/probe', headers, ...(payload !== undefined && { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }) });

  before(async () => {
    t = await startTestApp({
      extraRoutes: (app) => addRoute(app, {
        method: 'POST', url: '/api/v1/probe', auth: 'public', tags: ['probe'], summary: 'probe', body: ProbeBody,
        response: { 200: Type.Object({ ok: Type.Boolean() }) },
        handler: async (request) => { received.push(request.body); return { ok: true }; },
      }),
    });
  });
  after(async () => { await t.close(); });

  it('accepts a valid body, with any keys in a map field', async () => {
    received = [];
    const res = await probe({ ...valid(), headers: { 'X-Weird key/ü': 'a', constructorx: 'b', '': 'c' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((received[0] as { headers: object }).headers, { 'X-Weird key/ü': 'a', constructorx: 'b', '': 'c' });
  });

  it('names an unknown top-level key and lists what the body accepts (422)', async () => {
    const res = await probe({ ...valid(), colour: 'red' });
    assert.equal(res.statusCode, 422);
    const error = errorOf(res);
    assert.equal(error.code, 'INVALID_JSON');
    assert.equal(error.field, 'colour');
    assert.deepEqual(error.allowed, ['name', 'check', 'headers', 'count']);
    assert.match(error.message, /colour/);
  });

  it('names a nested unknown key by its path through objects and arrays', async () => {
    const body = valid();
    (body.check.steps[1] as Record<string, unknown>).selectr = '#typo';
    const res = await probe(body);
    assert.equal(res.statusCode, 422);
    const error = errorOf(res);
    assert.equal(error.code, 'INVALID_JSON');
    assert.equal(error.field, 'check.steps[1].selectr');
    assert.deepEqual(error.allowed, ['op', 'selector']);
    assert.match(error.message, /op, selector/);

    const inCheck = errorOf(await probe({ ...valid(), check: { ...valid().check, timeout: 5 } }));
    assert.deepEqual([inCheck.field, inCheck.allowed], ['check.timeout', ['type', 'steps']]);
  });

  it('names an unknown key on POST /api/v1/targets even when a required field is missing too', async () => {
    const { token } = await createTenantWithToken(t);
    const create = (body: unknown) => t.inject({ method: 'POST', url: '/api/v1/targets', headers: { ...bearer(token), ...JSON_CT }, payload: JSON.stringify(body) });
    const cases: Array<[unknown, string, string]> = [
      [{ bogus: 1 }, 'bogus', 'name'],
      [{ name: 'n', check: { type: 'http', bogus: 1 } }, 'check.bogus', 'url'],
      [{ check: { type: 'http', bogus: 1 } }, 'check.bogus', 'url'],
      [{ name: 'n', check: { type: 'http', url: 'https://example.com' }, alerts: [{ bogus: 1 }] }, 'alerts[0].bogus', 'channel_id'],
      [{ id: 'x', write_source: 'api' }, 'id', 'name'],
    ];
    for (const [body, field, accepted] of cases) {
      const res = await create(body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      const error = errorOf(res);
      assert.deepEqual([error.code, error.field], ['INVALID_JSON', field], JSON.stringify(body));
      assert.ok(error.allowed?.includes(accepted), `${field}: ${JSON.stringify(error.allowed)}`);
    }
    const missing = errorOf(await create({ check: { type: 'http', url: 'https://example.com' } }));
    assert.deepEqual([missing.code, missing.field], ['VALIDATION_FAILED', 'name']);
  });

  it('rejects a read-only field echoed back from a GET (PATCH /operator/regions/{id})', async () => {
    const got = await t.operator('GET', '/operator/regions/local');
    assert.equal(got.statusCode, 200);
    for (const key of ['id', 'created_at', 'updated_at']) {
      const res = await t.operator('PATCH', '/operator/regions/local', { name: 'Local', [key]: (got.json() as Record<string, unknown>)[key] });
      assert.equal(res.statusCode, 422, key);
      const error = errorOf(res);
      assert.equal(error.code, 'INVALID_JSON');
      assert.equal(error.field, key);
      assert.ok(error.allowed?.includes('name') && !error.allowed.includes(key));
    }
    const whole = await t.operator('PATCH', '/operator/regions/local', got.json());
    assert.equal(whole.statusCode, 422);
    assert.equal(errorOf(whole).code, 'INVALID_JSON');
  });

  it('answers 400 INVALID_JSON for a body that is not JSON, empty, or not an object', async () => {
    for (const payload of ['{bad', '{"name": "a",}', 'nul', '']) {
      const res = await probe(payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      const error = errorOf(res);
      assert.equal(error.code, 'INVALID_JSON');
      assert.equal(error.field, undefined);
    }
    for (const payload of ['[]', '[{"name":"a"}]', '"a string"', '42', 'null', 'true']) {
      const res = await probe(payload);
      assert.equal(res.statusCode, 400, payload);
      assert.equal(errorOf(res).code, 'INVALID_JSON', payload);
    }
  });

  it('answers 400 INVALID_JSON for a body that is not UTF-8, rather than storing U+FFFD in its place; a UTF-8 one goes through', async () => {
    const [head, tail] = JSON.stringify({ ...valid(), name: 'caf@' }).split('@') as [string, string];
    const withBytes = (bytes: number[]) => Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: JSON_CT, payload: withBytes(bad) });
      assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
      assert.deepEqual([errorOf(res).code, errorOf(res).message], ['INVALID_JSON', 'the body is not valid UTF-8']);
    }
    received = [];
    const ok = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: JSON_CT, payload: withBytes([0xc3, 0xa9]) });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal((received[0] as { name: string }).name, 'café');
  });

  it('answers 422 INVALID_JSON naming a __proto__ or constructor.prototype key, wherever it is, and pollutes nothing', async () => {
    const payloads: Array<[string, string]> = [
      ['{"__proto__": {"isAdmin": true}, "name": "a", "check": {"type": "flow", "steps": []}}', '__proto__'],
      ['{"name": "a", "check": {"type": "flow", "steps": [], "__proto__": {"x": 1}}}', 'check.__proto__'],
      ['{"constructor": {"prototype": {"isAdmin": true}}, "name": "a", "check": {"type": "flow", "steps": []}}', 'constructor.prototype'],
      ['{"name": "a", "check": {"type": "flow", "steps": [{"__proto__": 1}]}}', 'check.steps[0].__proto__'],
      ['{"name": "a", "check": {"type": "flow", "steps": []}, "headers": {"__proto__": "x"}}', 'headers.__proto__'],
    ];
    for (const [payload, field] of payloads) {
      const res = await probe(payload);
      assert.equal(res.statusCode, 422, `${payload} -> ${res.body}`);
      const error = errorOf(res);
      assert.equal(error.code, 'INVALID_JSON');
      assert.equal(error.field, field);
      assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
      assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'x'), false);
    }
    // A "constructor" key that holds no prototype is an ordinary unknown key.
    const plain = await probe('{"constructor": 1, "name": "a", "check": {"type": "flow", "steps": []}}');
    assert.equal(plain.statusCode, 422);
    assert.equal(errorOf(plain).field, 'constructor');
  });

  it('answers 415 INVALID_CONTENT_TYPE without application/json, with or without a body', async () => {
    const cases: InjectOptions[] = [
      { method: 'POST', url: '/api/v1/probe', payload: JSON.stringify(valid()), headers: { 'content-type': '' } },
      { method: 'POST', url: '/api/v1/probe' },
      { method: 'POST', url: '/api/v1/probe', payload: 'name=a', headers: { 'content-type': 'text/plain' } },
      { method: 'POST', url: '/api/v1/probe', payload: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { method: 'POST', url: '/api/v1/probe', payload: JSON.stringify(valid()), headers: { 'content-type': 'application/jsonp' } },
      { method: 'PATCH', url: '/operator/regions/local', payload: '{"name":"x"}', headers: { ...OP, 'content-type': 'text/plain' } },
      { method: 'PATCH', url: '/operator/regions/local', headers: OP },
      { method: 'POST', url: '/operator/regions', headers: OP },
    ];
    for (const options of cases) {
      const res = await t.inject(options);
      assert.equal(res.statusCode, 415, `${options.method} ${options.url} ${JSON.stringify(options.headers)}: ${res.body}`);
      assert.equal(errorOf(res).code, 'INVALID_CONTENT_TYPE');
    }
  });

  it('accepts application/json with a charset parameter', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON;charset=UTF-8']) {
      const res = await probe(valid(), { 'content-type': type });
      assert.equal(res.statusCode, 200, `${type}: ${res.body}`);
    }
  });

  it('a request must arrive whole within REQUEST_TIMEOUT_MS: a body that never finishes does not hold its connection for good', () => {
    assert.equal(t.app.server.requestTimeout, REQUEST_TIMEOUT_MS);
    assert.ok(REQUEST_TIMEOUT_MS > 0 && REQUEST_TIMEOUT_MS <= 300_000);
  });

  it('answers 415 INVALID_CONTENT_TYPE for a body with a content coding, compressed or not; identity goes through', async () => {
    const before = received.length;
    const gzipped = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: { ...JSON_CT, 'content-encoding': 'gzip' }, payload: gzipSync(JSON.stringify(valid())) });
    assert.equal(gzipped.statusCode, 415);
    assert.equal(errorOf(gzipped).code, 'INVALID_CONTENT_TYPE');
    assert.match(errorOf(gzipped).message, /Content-Encoding gzip is not accepted/);
    const labelled = await probe(valid(), { ...JSON_CT, 'content-encoding': 'br' });
    assert.equal(labelled.statusCode, 415, 'a plain body labelled br is not taken at its word');
    assert.equal(received.length, before, 'neither reached the handler');
    assert.equal((await probe(valid(), { ...JSON_CT, 'content-encoding': 'Identity' })).statusCode, 200);
  });

  it('answers 400 VALIDATION_FAILED naming the field for a wrong type or a missing field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...valid(), name: 42 }, 'name'],
      [{ ...valid(), name: '' }, 'name'],
      [{ ...valid(), count: 1.5 }, 'count'],
      [{ ...valid(), count: '3' }, 'count'],
      [{ check: valid().check }, 'name'],
      [{ ...valid(), check: { type: 'flow' } }, 'check.steps'],
      [{ ...valid(), check: { type: 'smtp', steps: [] } }, 'check.type'],
      [{ ...valid(), check: { type: 'flow', steps: [{ op: 'a' }, { selector: 'b' }] } }, 'check.steps[1].op'],
      [{ ...valid(), check: { type: 'flow', steps: [{ op: 'a' }, { op: 'b', selector: 7 }] } }, 'check.steps[1].selector'],
      [{ ...valid(), headers: { 'X-A': 1 } }, 'headers.X-A'],
      [{ ...valid(), check: { type: 'flow', steps: {} } }, 'check.steps'],
    ];
    for (const [body, field] of cases) {
      const res = await probe(body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      const error = errorOf(res);
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.equal(error.field, field, JSON.stringify(body));
    }
    const enumError = errorOf(await probe({ ...valid(), check: { type: 'smtp', steps: [] } }));
    assert.match(enumError.message, /"flow", "http"/);
  });

  it('refuses text PostgreSQL cannot store (NUL, unpaired surrogates) as 400 naming the field, not a 500', async () => {
    for (const [payload, field] of [['{"name": "Lo\\u0000cal"}', 'name'], ['{"city": "\\ud800"}', 'city']] as const) {
      const res = await t.inject({ method: 'PATCH', url: '/operator/regions/local', headers: { ...OP, ...JSON_CT }, payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual([errorOf(res).code, errorOf(res).field], ['VALIDATION_FAILED', field]);
    }
    const res = await probe('{"name": "a", "check": {"type": "flow", "steps": []}, "headers": {"X-\\u0000": "v"}}');
    assert.equal(res.statusCode, 400);
    assert.equal(errorOf(res).field, 'headers.X-?');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
    const res = await probe({ ...valid(), name: 'a'.repeat(1024 * 1024) });
    assert.equal(res.statusCode, 413);
    assert.equal(errorOf(res).code, 'PAYLOAD_TOO_LARGE');
  });

  it('ignores an empty body sent with a JSON content type to a route that takes no body', async () => {
    const created = await t.operator('POST', '/operator/users', { email: `nobody-${Date.now()}@example.test` });
    assert.equal(created.statusCode, 201, created.body);
    const account = (created.json() as { account_id: string }).account_id;
    const res = await t.inject({ method: 'DELETE', url: `/operator/accounts/${account}/overrides`, headers: { ...OP, ...JSON_CT } });
    assert.equal(res.statusCode, 200, res.body);
    const get = await t.inject({ method: 'GET', url: '/operator/regions', headers: { ...OP, ...JSON_CT } });
    assert.equal(get.statusCode, 200, get.body);
  });

  it('refuses any key sent to a route that takes no body, and takes {}', async () => {
    const created = await t.operator('POST', '/operator/users', { email: `keys-${Date.now()}@example.test` });
    const account = (created.json() as { account_id: string }).account_id;
    const clear = (payload: string) => t.inject({ method: 'DELETE', url: `/operator/accounts/${account}/overrides`, headers: { ...OP, ...JSON_CT }, payload });

    const unknown = await clear('{"reason":"x"}');
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.deepEqual(errorOf(unknown), { code: 'INVALID_JSON', message: errorOf(unknown).message, field: 'reason', allowed: [] });
    const notAnObject = await clear('[1]');
    assert.equal(notAnObject.statusCode, 400, notAnObject.body);
    assert.equal(errorOf(notAnObject).code, 'INVALID_JSON');
    const broken = await clear('{');
    assert.equal(broken.statusCode, 400, broken.body);
    assert.equal(errorOf(broken).code, 'INVALID_JSON');
    const empty = await clear('{}');
    assert.equal(empty.statusCode, 200, empty.body);
  });

  it('does not coerce body values (a numeric string stays a wrong type)', async () => {
    const res = await t.operator('PATCH', '/operator/regions/local', { enabled: 'true' });
    assert.equal(res.statusCode, 400);
    assert.equal(errorOf(res).field, 'enabled');
  });
});
