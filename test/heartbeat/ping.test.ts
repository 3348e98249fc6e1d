// Heartbeat monitors over HTTP (monitoring-api.md, "Heartbeat record", "Heartbeat ping endpoint",
// "Heartbeat monitor" transitions): the record, every signal, results only on verdict changes,
// incidents, output, the rate limit, pause and hold, the scheduler's evaluation on a test clock.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateHeartbeats } from '../../src/heartbeat/index.js';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from '../targets/helpers.js';

const MIN = 60_000;

describe('heartbeat monitors: record and ingest', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp({ config: { 'auth.public_base_url': 'https://keepwatch.example' } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  /** A new heartbeat monitor and its ping path. */
  const heartbeat = async (check: Json = {}, extra: Json = {}): Promise<{ id: string; path: string }> => {
    const res = await api('POST', '/api/v1/targets', { name: 'nightly backup', check: { type: 'heartbeat', period: 10 * MIN, grace: 2 * MIN, ...check }, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    return { id, path: new URL((await record(id)).ping_url).pathname };
  };
  const record = async (id: string): Promise<Json> => {
    const res = await api('GET', `/api/v1/targets/${id}/heartbeat`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const ping = (path: string, method: 'GET' | 'POST' = 'GET', payload?: string, headers: Record<string, string> = {}) =>
    t.inject({ method, url: path, ...(payload !== undefined && { payload }), headers });
  const results = (id: string) => t.services.db.query<{ status: string; error: string | null; region: string }>(
    'SELECT status, error, region FROM check_results WHERE target_id = $1 ORDER BY checked_at, id', [id]);
  const openIncidents = async (id: string) => (await api('GET', `/api/v1/incidents?status=open&target_id=${id}`)).json().incidents as Json[];
  const evaluate = () => evaluateHeartbeats(t.services);

  it('a single create mints the URL at once; the record has every field; it needs targets:write', async () => {
    const { id, path } = await heartbeat();
    const rec = await record(id);
    assert.match(rec.ping_url, /^https:\/\/keepwatch\.example\/ping\/[A-Za-z0-9_-]{43}$/);
    assert.equal(path, new URL(rec.ping_url).pathname);
    assert.deepEqual({ ...rec, ping_url: undefined, created_at: undefined }, {
      ping_url: undefined, created_at: undefined,
      pending: true, first_ping_at: null, last_ping_at: null, last_start_at: null, last_fail_at: null, last_exit_code: null,
      last_failure_output: null, declared_period_secs: 600, observed_period_secs: null, rotated_at: null,
    });
    assert.ok(!Number.isNaN(Date.parse(rec.created_at)));
    const reader = client(t, await createToken(t, tenant.userId, { scopes: ['targets:read'], orgId: tenant.orgId }));
    expectError(await reader('GET', `/api/v1/targets/${id}/heartbeat`), 403, 'INSUFFICIENT_SCOPE');
    const httpId = (await api('POST', '/api/v1/targets', httpTarget())).json().id;
    expectError(await api('GET', `/api/v1/targets/${httpId}/heartbeat`), 404, 'NOT_FOUND');
    const other = client(t, (await createTenantWithToken(t)).token);
    expectError(await other('GET', `/api/v1/targets/${id}/heartbeat`), 404, 'NOT_FOUND');
  });

  it('bulk-created and duplicated heartbeats each have their own URL', async () => {
    const bulk = await api('POST', '/api/v1/targets/bulk', { targets: [1, 2].map((n) => ({ name: `job ${n}`, check: { type: 'heartbeat', period: 10 * MIN, grace: 0 } })) });
    assert.equal(bulk.statusCode, 201, bulk.body);
    const ids = (bulk.json().targets as Json[]).map((x) => x.id as string);
    const dup = await api('POST', `/api/v1/targets/${ids[0]}/duplicate`, { copies: [{ name: 'job copy' }] });
    assert.equal(dup.statusCode, 201, dup.body);
    ids.push(dup.json().targets[0].id);
    const urls = await Promise.all(ids.map(async (id) => (await record(id)).ping_url as string));
    assert.equal(new Set(urls).size, 3);
    for (const url of urls) assert.equal((await ping(new URL(url).pathname)).statusCode, 200);
  });

  it('pending ends with the first ping; only verdict changes write results', async () => {
    const { id, path } = await heartbeat();
    assert.equal((await evaluate()), 0);
    assert.deepEqual(await results(id), [], 'pending: not evaluated, no results');
    const res = await ping(path);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'OK\n');
    for (let i = 0; i < 3; i++) assert.equal((await ping(`${path}/success`)).statusCode, 200);
    assert.deepEqual(await results(id), [{ status: 'up', error: null, region: 'none' }], 'three routine pings wrote nothing');
    const rec = await record(id);
    assert.equal(rec.pending, false);
    assert.ok(rec.first_ping_at <= rec.last_ping_at);
    const logged = await t.services.db.query('SELECT 1 FROM heartbeat_pings WHERE target_id = $1', [id]);
    assert.equal(logged.length, 4, 'every ping is in the log');
  });

  it('a fail first ping alerts at once', async () => {
    const { id, path } = await heartbeat();
    assert.equal((await ping(`${path}/fail`)).statusCode, 200);
    assert.deepEqual(await results(id), [{ status: 'down', error: 'the job reported a failure', region: 'none' }]);
    assert.equal((await openIncidents(id)).length, 1);
  });

  it('fail and exit codes go down at once, a success comes back up; the record follows', async () => {
    const { id, path } = await heartbeat();
    await ping(`${path}/0`);
    assert.equal((await ping(`${path}/start`)).statusCode, 200);
    assert.equal((await ping(`${path}/3`)).statusCode, 200);
    assert.equal((await openIncidents(id)).length, 1);
    await ping(`${path}/fail`);
    let rec = await record(id);
    assert.equal(rec.last_exit_code, 3);
    assert.ok(rec.last_start_at && rec.last_fail_at >= rec.last_start_at);
    await ping(`${path}/success`);
    assert.deepEqual((await results(id)).map((r) => [r.status, r.error]), [['up', null], ['down', 'the job exited with code 3'], ['up', null]]);
    assert.equal((await openIncidents(id)).length, 0, 'the success closed the incident (recovery period 0)');
    rec = await record(id);
    assert.equal(rec.last_exit_code, 3, 'a success without a code leaves the last code');
    const [run] = await t.services.db.query<{ run_ms: number | null }>(
      `SELECT run_ms FROM heartbeat_pings WHERE target_id = $1 AND exit_code = 3`, [id]);
    assert.ok(run!.run_ms !== null && run!.run_ms >= 0, 'start then finish gives the run a duration');
  });

  it('unknown segments, unknown tokens and malformed tokens are the same 404', async () => {
    const { id, path } = await heartbeat();
    const answers = await Promise.all([
      ping(`${path}/256`), ping(`${path}/-1`), ping(`${path}/007`), ping(`${path}/log`), ping(`${path}/success/extra`),
      ping('/ping/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), ping('/ping/short'), ping('/ping/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/fail', 'POST', 'x'),
    ]);
    for (const res of answers) {
      expectError(res, 404, 'NOT_FOUND');
      assert.equal(res.body, answers[0]!.body);
    }
    assert.equal((await record(id)).pending, true, 'none of them counted');
    assert.equal((await t.inject({ method: 'HEAD', url: path })).statusCode, 404, 'HEAD is not a ping');
  });

  it("a POST body is the run's output: the first 4 KiB, shown for a failure", async () => {
    const { id, path } = await heartbeat();
    const output = `backup failed: disk full\n${'x'.repeat(5000)}`;
    const res = await ping(`${path}/fail`, 'POST', output, { 'content-type': 'text/plain' });
    assert.equal(res.statusCode, 200);
    const rec = await record(id);
    assert.equal(rec.last_failure_output, output.slice(0, 4096));
    await ping(path, 'POST', '{"ok": true}', { 'content-type': 'application/json' });
    const [success] = await t.services.db.query<{ output: string }>(`SELECT output FROM heartbeat_pings WHERE target_id = $1 AND signal = 'success'`, [id]);
    assert.equal(success!.output, '{"ok": true}', 'any content type is kept as text');
    assert.equal((await record(id)).last_failure_output, output.slice(0, 4096), 'a success does not replace the failure output');
  });

  it('each token takes a burst of 10, then 1 per second across all signals; excess is 429 with Retry-After', async () => {
    const { id, path } = await heartbeat();
    const signals = ['', '/start', '/0', '/success', '/fail'];
    for (let i = 0; i < 10; i++) assert.equal((await ping(`${path}${signals[i % signals.length]}`)).statusCode, 200, `ping ${i + 1}`);
    const limited = await ping(`${path}/fail`);
    expectError(limited, 429, 'RATE_LIMITED');
    assert.equal(limited.headers['retry-after'], '1');
    t.clock.advance(1_000);
    assert.equal((await ping(path)).statusCode, 200);
    const logged = await t.services.db.query('SELECT 1 FROM heartbeat_pings WHERE target_id = $1', [id]);
    assert.equal(logged.length, 11, 'the refused ping was not counted');
  });

  it('a URL that names no heartbeat stays 404 past the burst, unknown and revoked alike; a replaced URL in its overlap is limited', async () => {
    const rotate = async (id: string, body: Json) => assert.equal((await api('POST', `/api/v1/targets/${id}/heartbeat/rotate`, body)).statusCode, 200);
    const { id: first, path: overlapping } = await heartbeat();
    await rotate(first, {});
    const { id: second, path: revoked } = await heartbeat();
    await rotate(second, { revoke_previous_immediately: true });
    const unknown = `/ping/${'B'.repeat(43)}`;
    for (const gone of [unknown, revoked]) {
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push(await ping(gone));
      for (const res of answers) {
        expectError(res, 404, 'NOT_FOUND');
        assert.equal(res.headers['retry-after'], undefined);
      }
    }
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push((await ping(overlapping)).statusCode);
    assert.deepEqual(answers, [...Array(10).fill(200), 429], 'the first URL still works for 24 h, so it is limited like any');
  });

  it('silence past period + grace goes down on evaluation, not before; a success comes back up', async () => {
    const { id, path } = await heartbeat();
    await ping(path);
    t.clock.advance(12 * MIN - 5_000);
    await evaluate();
    assert.equal((await results(id)).length, 1, 'within period + grace');
    t.clock.advance(10_000);
    assert.ok((await evaluate()) >= 1);
    const last = (await results(id)).at(-1)!;
    assert.equal(last.status, 'down');
    assert.match(last.error!, /period \+ grace/);
    assert.equal((await openIncidents(id)).length, 1);
    await evaluate();
    assert.equal((await results(id)).length, 2, 'down is not judged again');
    await ping(path);
    assert.equal((await results(id)).at(-1)!.status, 'up');
    assert.equal((await openIncidents(id)).length, 0);
  });

  it('a later success moves the silence deadline on: the old deadline passing is not a silence', async () => {
    const { id, path } = await heartbeat();
    await ping(path);
    t.clock.advance(10 * MIN);
    await ping(path);
    t.clock.advance(3 * MIN);
    await evaluate();
    assert.deepEqual((await results(id)).map((r) => r.status), ['up'], 'the first ping\'s deadline passed, the second\'s has not');
    t.clock.advance(9 * MIN + 5_000);
    await evaluate();
    assert.deepEqual((await results(id)).map((r) => r.status), ['up', 'down']);
    assert.equal((await api('DELETE', `/api/v1/targets/${id}`)).statusCode, 204, 'a heartbeat with history deletes cleanly');
    expectError(await ping(path), 404, 'NOT_FOUND');
  });

  it('a /start that outlives max_runtime goes down; without /start max_runtime does nothing', async () => {
    const { id, path } = await heartbeat({ max_runtime: 2 * MIN });
    await ping(path);
    t.clock.advance(3 * MIN);
    await evaluate();
    assert.equal((await results(id)).length, 1, 'no /start: only the silence rule applies');
    await ping(`${path}/start`);
    t.clock.advance(2 * MIN + 1_000);
    await evaluate();
    const last = (await results(id)).at(-1)!;
    assert.equal(last.status, 'down');
    assert.match(last.error!, /max_runtime/);
  });

  it('PATCHing period moves the deadline', async () => {
    const { id, path } = await heartbeat();
    await ping(path);
    const res = await api('PATCH', `/api/v1/targets/${id}`, { check: { type: 'heartbeat', period: 2 * MIN, grace: 0 } });
    assert.equal(res.statusCode, 200, res.body);
    t.clock.advance(2 * MIN + 1_000);
    await evaluate();
    assert.equal((await results(id)).at(-1)!.status, 'down');
  });

  it('paused: pings answer 200 and are logged but judge nothing; a resume gives a full period + grace', async () => {
    const { id, path } = await heartbeat();
    await ping(path);
    await ping(`${path}/fail`);
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: false })).statusCode, 200);
    const before = await record(id);
    assert.equal((await ping(path)).statusCode, 200);
    assert.equal((await ping(`${path}/fail`)).statusCode, 200);
    assert.deepEqual(await record(id), before, 'no state change while paused');
    const [uncounted] = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM heartbeat_pings WHERE target_id = $1 AND NOT counted', [id]);
    assert.equal(uncounted!.n, 2);
    t.clock.advance(60 * MIN);
    await evaluate();
    assert.equal((await results(id)).length, 2, 'a paused heartbeat is not evaluated');
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: true })).statusCode, 200);
    assert.deepEqual((await results(id)).map((r) => r.status), ['up', 'down', 'up'], 'resumed after being down: up');
    assert.equal((await openIncidents(id)).length, 0);
    t.clock.advance(12 * MIN - 5_000);
    await evaluate();
    assert.equal((await results(id)).length, 3, 'a full period + grace from the resume');
    t.clock.advance(10_000);
    await evaluate();
    assert.equal((await results(id)).at(-1)!.status, 'down');
  });

  it('a never-pinged heartbeat stays pending across pause and resume; bulk resume works too', async () => {
    const { id } = await heartbeat();
    await api('POST', '/api/v1/targets/bulk-action', { action: 'disable', ids: [id] });
    const res = await api('POST', '/api/v1/targets/bulk-action', { action: 'enable', ids: [id] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await record(id)).pending, true);
    assert.deepEqual(await results(id), []);
  });

  it('held: pings answer 200 and judge nothing', async () => {
    const { id, path } = await heartbeat();
    await ping(path);
    await t.services.db.query('UPDATE targets SET held_at = now() WHERE id = $1', [id]);
    assert.equal((await ping(`${path}/fail`)).statusCode, 200);
    assert.equal((await record(id)).last_fail_at, null);
    assert.deepEqual((await results(id)).map((r) => r.status), ['up']);
  });

  it('a ping older than one already applied is logged but judges nothing: the newest ping has the last word', async () => {
    const { id, path } = await heartbeat();
    await ping(path);
    await ping(`${path}/fail`);
    t.clock.advance(-MIN);
    assert.equal((await ping(path)).statusCode, 200, 'arrived late, as from a batch that locked the row after a newer one');
    t.clock.advance(MIN);
    assert.deepEqual((await results(id)).map((r) => r.status), ['up', 'down'], 'still down');
    const [late] = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM heartbeat_pings WHERE target_id = $1 AND signal = 'success'`, [id]);
    assert.equal(late!.n, 2, 'the late success is in the log');
  });

  it('concurrent pings are all acknowledged and logged (group commit)', async () => {
    const monitors = await Promise.all(Array.from({ length: 20 }, () => heartbeat()));
    const answers = await Promise.all(monitors.flatMap(({ path }) => [ping(path), ping(`${path}/start`), ping(`${path}/0`)]));
    assert.ok(answers.every((r) => r.statusCode === 200));
    const [row] = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM heartbeat_pings WHERE target_id = ANY($1::uuid[])', [monitors.map((m) => m.id)]);
    assert.equal(row!.n, 60);
  });

  it("deleting a heartbeat monitor takes its ping log with it; other monitors' pings stay", async () => {
    const [gone, kept] = await Promise.all([heartbeat(), heartbeat()]);
    for (const { path } of [gone, kept]) {
      await ping(path);
      await ping(path, 'POST', 'the run\'s output');
    }
    const logged = async (id: string) => (await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM heartbeat_pings WHERE target_id = $1', [id]))[0]!.n;
    assert.equal(await logged(gone.id), 2);
    assert.equal((await api('DELETE', `/api/v1/targets/${gone.id}`)).statusCode, 204);
    assert.equal(await logged(gone.id), 0);
    assert.equal(await logged(kept.id), 2);
    assert.equal((await ping(gone.path)).statusCode, 404);
  });
});
