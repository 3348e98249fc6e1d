// The check engine end to end: the scheduler runs real http probes against a local server on the
// monitors' slots, results land in the history with the stale cap uptime needs, the per-host
// throttle drops (and counts) a tick over its cap without writing a result, a header holding a
// secret variable goes to no other origin, and the scheduler's metrics reach the registry `serve` exposes.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { startCheckEngine } from '../../src/checks/index.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, overrideCaps, type Api, type Json } from '../targets/helpers.js';

describe('check engine', () => {
  let t: TestApp;
  let server: Server;
  let elsewhere: Server;
  let base: string;
  let engine: Scheduler | undefined;
  const registry = new Registry();
  const seen: Array<{ at: 'here' | 'elsewhere'; url: string; headers: IncomingHttpHeaders }> = [];

  before(async () => {
    // Another port: another origin.
    elsewhere = createServer((req, res) => {
      seen.push({ at: 'elsewhere', url: req.url!, headers: req.headers });
      res.writeHead(200);
      res.end('ok');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const elsewhereBase = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    server = createServer((req, res) => {
      seen.push({ at: 'here', url: req.url!, headers: req.headers });
      if (req.url === '/hang') return; // answered by nobody: the probe's timeout ends it
      if (req.url === '/bounce') { res.writeHead(302, { location: `${elsewhereBase}/landed` }); res.end(); return; }
      res.writeHead(req.url === '/down' ? 500 : 200);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startTestApp({ config: { 'security.allow_private_targets': true, 'checker.per_host_max_inflight': 1 } });
  });
  after(async () => {
    await engine?.stop();
    await t.close();
    for (const s of [server, elsewhere]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  const tenant = async (): Promise<{ api: Api; orgId: string }> => {
    const x = await createTenantWithToken(t, { plan: 'team' });
    await overrideCaps(t, x.accountId, { min_check_interval_secs: 1 });
    return { api: client(t, x.token), orgId: x.orgId };
  };
  const create = async (api: Api, path: string, timeout = 5000, headers: Record<string, string> = {}): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', { name: path, interval: 10, check: { type: 'http', url: `${base}${path}`, timeout, headers } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const metric = async (name: string): Promise<number> => {
    const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : 0;
  };

  it('runs monitors on their slots, writes their results, keeps secrets at the origin, and throttles a busy host', async () => {
    const one = await tenant();
    const up = await create(one.api, '/');
    const down = await create(one.api, '/down');
    assert.equal((await one.api('POST', '/api/v1/variables', { key: 'api_key', value: 's3cret', is_secret: true })).statusCode, 201);
    const bounce = await create(one.api, '/bounce', 5000, { 'X-Key': '{{api_key}}', 'X-Plain': 'p' });
    // Another org, one host: with one check in flight per (org, host, port), two checks that each
    // hang 9.5 s of a 10 s interval cannot both run; one tick per round is dropped.
    const two = await tenant();
    await create(two.api, '/hang', 9500);
    await create(two.api, '/hang', 9500);

    // The engine's own lease TTL: with a 3 s one, a node runs a shard only within 2 s of a renewal's
    // start, which a loaded CI machine's renewals can outlast, and then nothing runs.
    engine = await startCheckEngine(t.services, { pollMs: 200, reloadMs: 5000, registry });
    const history = async (id: string): Promise<Json[]> => (await one.api('GET', `/api/v1/targets/${id}/results`)).json().results;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      await t.services.results.flush();
      if ((await history(up)).length && (await history(down)).length && (await history(bounce)).length && (await metric('keepwatch_checks_throttled_total')) >= 1) break;
      await sleep(250);
    }

    const [upResult] = await history(up);
    const [downResult] = await history(down);
    assert.deepEqual([upResult?.status, upResult?.region, upResult?.status_code], ['up', 'local', 200]);
    assert.deepEqual([downResult?.status, downResult?.status_code], ['down', 500]);
    const [row] = await t.services.db.query<{ stale_after_ms: number }>('SELECT stale_after_ms FROM check_results WHERE target_id = $1 LIMIT 1', [up]);
    assert.equal(row!.stale_after_ms, 30_000, 'three 10 s intervals');
    const uptime = (await one.api('GET', `/api/v1/targets/${up}/uptime`)).json();
    assert.equal(uptime.uptime_pct, 100);
    assert.ok(uptime.checks.up >= 1);

    const [bounced] = await history(bounce);
    assert.deepEqual([bounced?.status, bounced?.redirects], ['up', 1]);
    assert.equal(seen.find((h) => h.at === 'here' && h.url === '/bounce')?.headers['x-key'], 's3cret', 'the check\'s origin got the secret');
    const landed = seen.find((h) => h.at === 'elsewhere' && h.url === '/landed')!.headers;
    assert.deepEqual([landed['x-key'], landed['x-plain']], [undefined, 'p'], 'another origin got the plain header, not the secret');

    assert.ok(await metric('keepwatch_checks_throttled_total') >= 1, 'a tick over the per-host cap was dropped and counted');
    assert.ok(await metric('keepwatch_checks_total') >= 3);
    const hung = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM check_results WHERE org_id = $1', [two.orgId]);
    assert.ok(hung[0]!.n <= 2, 'a dropped tick writes no result');
  });
});
