// Prometheus metrics (the operator surface): every answered request is counted and timed under its
// route pattern, never the raw URL; the heartbeat pings the HTTP server answers ahead of Fastify too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metrics } from '../../src/http/metrics.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';

describe('request metrics', () => {
  let t: TestApp;
  let base: string;
  const metrics = new Metrics();
  before(async () => {
    t = await startTestApp({ metrics });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => { await t.close(); });

  /** The value of one sample of the exposition, 0 when absent. */
  const sample = async (name: string, labels: string): Promise<number> => {
    const line = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('counts API requests and socket-answered pings by route pattern and status', async () => {
    const { token } = await createTenantWithToken(t, { plan: 'team' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/api/v1/targets`, {
      method: 'POST', headers, body: JSON.stringify({ name: 'job', check: { type: 'heartbeat', period: 600_000, grace: 60_000 } }),
    });
    const { id } = await created.json() as { id: string };
    const record = await (await fetch(`${base}/api/v1/targets/${id}/heartbeat`, { headers })).json() as { ping_url: string };
    const path = new URL(record.ping_url).pathname;
    for (const url of [path, `${path}/start`, `${path}/0`, `/ping/${'A'.repeat(43)}`]) await (await fetch(`${base}${url}`)).text();

    assert.equal(await sample('keepwatch_http_requests_total', 'method="POST",route="/api/v1/targets",status="201"'), 1);
    assert.equal(await sample('keepwatch_http_requests_total', 'method="GET",route="/api/v1/targets/:id/heartbeat",status="200"'), 1);
    assert.equal(await sample('keepwatch_http_requests_total', 'method="GET",route="/ping/:token",status="200"'), 1);
    assert.equal(await sample('keepwatch_http_requests_total', 'method="GET",route="/ping/:token/:signal",status="200"'), 2);
    assert.equal(await sample('keepwatch_http_requests_total', 'method="GET",route="/ping/:token",status="404"'), 1);
    assert.equal(await sample('keepwatch_http_request_duration_seconds_count', 'method="GET",route="/ping/:token/:signal"'), 2);
    assert.ok(!(await metrics.registry.metrics()).includes(id), 'no raw URL in a label');
  });
});
