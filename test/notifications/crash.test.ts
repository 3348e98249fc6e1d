// A node killed between the incident's commit and the end of its delivery loses no notification:
// the outbox row committed with the incident, the claim's lease runs out, and the restarted node
// delivers it, with the same idempotency key the interrupted send carried.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createChildStore, startChildServer, type ChildServer, type ChildStore } from '../db/child-server.js';

describe('notifications survive a crash mid-delivery', () => {
  let store: ChildStore | undefined;
  let server: ChildServer | undefined;
  let receiver: Server | undefined;
  after(async () => {
    await server?.kill();
    await store?.drop();
    receiver?.closeAllConnections();
    await new Promise((ok) => (receiver ? receiver.close(ok) : ok(undefined)));
  });

  it('delivers after kill -9 and a restart, once more, with the same id', async () => {
    const bodies: { id: string; event: string }[] = [];
    let firstArrived!: () => void;
    const arrived = new Promise<void>((ok) => { firstArrived = ok; });
    receiver = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', () => {
        bodies.push(JSON.parse(raw));
        if (bodies.length === 1) return firstArrived(); // the first send never gets its answer
        res.writeHead(204);
        res.end();
      });
    });
    await new Promise<void>((ok) => receiver!.listen(0, '127.0.0.1', ok));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    store = await createChildStore();
    const env = {
      KEEPWATCH_OPERATOR__SECRET: 'x', KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS: 'true',
      KEEPWATCH_CHECKER__ENABLED: 'false', KEEPWATCH_NOTIFICATIONS__LEASE_SECS: '2',
    };
    server = await startChildServer(store, env);
    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const res = await fetch(`${server!.base}${path}`, {
        method, headers: { authorization: `Bearer ${token ?? 'x'}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (res.status === 204 ? {} : await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const user = await call('POST', '/operator/users', { email: `crash-${Date.now()}@example.test`, org_name: 'Crash' });
    assert.equal(user.status, 201);
    const token = (await call('POST', `/operator/users/${user.json.user_id}/api-tokens`, { name: 't', scopes: ['full_access'], org_id: user.json.org_id })).json.token as string;
    const channel = await call('POST', '/api/v1/notification-channels', { name: 'hook', config: { type: 'webhook', url: hook } }, token);
    assert.equal(channel.status, 201, JSON.stringify(channel.json));
    const monitor = await call('POST', '/api/v1/targets', { name: 'ledger', check: { type: 'manual' }, alerts: [{ channel_id: channel.json.id }] }, token);
    assert.equal(monitor.status, 201, JSON.stringify(monitor.json));
    assert.equal((await call('PUT', `/api/v1/targets/${monitor.json.id}/state`, { status: 'down', note: 'ledger offline' }, token)).status, 200);

    await arrived;
    await server.kill('SIGKILL');
    server = await startChildServer(store, env);

    const deadline = Date.now() + 30_000;
    while (bodies.length < 2 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(bodies.length, 2, 'delivered again after the restart');
    assert.equal(bodies[1]!.id, bodies[0]!.id, 'the same idempotency key');
    assert.equal(bodies[1]!.event, 'opened');
    const [incident] = (await call('GET', `/api/v1/incidents?target_id=${monitor.json.id}`, undefined, token)).json.incidents;
    const [state] = (await call('GET', `/api/v1/incidents/${incident.id}/notifications`, undefined, token)).json.notifications;
    assert.deepEqual([state.status, state.attempts, state.id], ['delivered', 2, bodies[0]!.id]);
  });
});
