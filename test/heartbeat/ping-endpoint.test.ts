// The ping endpoint on a real socket (ping-endpoint.ts): the HTTP server answers pings before
// Fastify, with the same answers the documented routes give through `inject`: status, body,
// content type, the error envelope, Retry-After, x-request-id. HEAD and other methods stay Fastify's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client } from '../targets/helpers.js';

describe('heartbeat ping endpoint on the socket', () => {
  let t: TestApp;
  let base: string;
  /** Requests under /ping/ that reached Fastify's hooks. */
  let seenByFastify = 0;
  let path: string;
  before(async () => {
    t = await startTestApp({
      extraRoutes: (app) => app.addHook('onRequest', async (request) => { if (request.url.startsWith('/ping/')) seenByFastify++; }),
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    const res = await api('POST', '/api/v1/targets', { name: 'job', check: { type: 'heartbeat', period: 600_000, grace: 60_000 } });
    path = new URL((await api('GET', `/api/v1/targets/${res.json().id}/heartbeat`)).json().ping_url).pathname;
  });
  after(async () => { await t.close(); });

  /** The same request over the socket and through `inject`. */
  const both = async (method: string, url: string, headers: Record<string, string> = {}) => {
    const socket = await fetch(`${base}${url}`, { method, headers });
    const injected = await t.inject({ method: method as 'GET', url, headers });
    return {
      socket: { status: socket.status, type: socket.headers.get('content-type'), body: await socket.text(), requestId: socket.headers.get('x-request-id'), retryAfter: socket.headers.get('retry-after') },
      injected: { status: injected.statusCode, type: injected.headers['content-type'], body: injected.body, requestId: injected.headers['x-request-id'], retryAfter: injected.headers['retry-after'] ?? null },
    };
  };

  it('a ping over the socket is answered without Fastify, as the documented route answers it', async () => {
    const before = seenByFastify;
    const { socket, injected } = await both('GET', path);
    assert.deepEqual({ ...socket, requestId: undefined }, { status: 200, type: 'text/plain; charset=utf-8', body: 'OK\n', requestId: undefined, retryAfter: null });
    assert.deepEqual({ ...injected, requestId: undefined }, { ...socket, requestId: undefined });
    assert.match(socket.requestId!, /^[0-9a-f-]{36}$/);
    assert.equal(seenByFastify, before + 1, 'only the injected request went through Fastify');
    const signals = await Promise.all([`${path}/start`, `${path}/0`, `${path}?rid=1`].map((url) => fetch(`${base}${url}`, { method: 'POST', body: 'log' })));
    assert.deepEqual(signals.map((r) => r.status), [200, 200, 200]);
  });

  it('bad paths answer the unknown-route 404 envelope, on the socket as through Fastify', async () => {
    const unknownRoute = await fetch(`${base}/no/such/route`);
    const envelope = await unknownRoute.json();
    for (const url of ['/ping/short', `/ping/${'A'.repeat(43)}`, `${path}/256`, `${path}/nope`, `${path}/0/extra`, '/ping/%E0%A4%A']) {
      const { socket, injected } = await both('GET', url);
      assert.deepEqual([socket.status, socket.type, JSON.parse(socket.body)], [404, 'application/json; charset=utf-8', envelope], url);
      assert.deepEqual([injected.status, JSON.parse(injected.body)], [404, envelope], url);
    }
    const head = await fetch(`${base}${path}`, { method: 'HEAD' });
    assert.equal(head.status, 404, 'HEAD is not a ping');
  });

  it('the rate limit answers 429 RATE_LIMITED with Retry-After on the socket; a request id sent is echoed', async () => {
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await fetch(`${base}${path}/success`, { headers: { 'x-request-id': `probe-${i}` } }));
    const limited = answers.at(-1)!;
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('x-request-id'), 'probe-11');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await limited.json()).error.code, 'RATE_LIMITED');
    // Recorded like every rate-limit refusal (service-api.md, Events 6).
    await t.services.quotaEvents.flush();
    const [events] = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM quota_events WHERE event = 'rate_limited' AND quota = 'ping'`);
    assert.ok(events!.n >= 2, `${events!.n} ping refusals recorded`);
  });
});
