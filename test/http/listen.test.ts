// `keepwatch serve` binds the API and metrics listeners or neither: a port already taken stops the
// process with a line naming the key, instead of a half-started node answering /healthz. Bound, each
// listener's address is logged.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { childEnv, createChildStore, freePort, ROOT, startChildServer, type ChildServer, type ChildStore } from '../db/child-server.js';

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function isListening(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); ok(true); });
    socket.once('error', () => ok(false));
  });
}

describe('keepwatch serve: its listeners, and a port already taken', { timeout: 180_000 }, () => {
  const stores: ChildStore[] = [];
  let first: ChildServer;
  let metricsPort: number;

  before(async () => {
    metricsPort = await freePort();
    const store = await createChildStore();
    stores.push(store);
    first = await startChildServer(store, { KEEPWATCH_METRICS__ENABLED: 'true', KEEPWATCH_METRICS__PORT: String(metricsPort), KEEPWATCH_LOG__LEVEL: 'info' });
  });
  after(async () => {
    await first?.kill();
    for (const store of stores) await store.drop();
  });

  it('logs the address of each listener at startup, the metrics one marked as such', async () => {
    const deadline = Date.now() + 10_000;
    while (!first.output().includes('keepwatch is serving') && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 50));
    const listening = first.output().split('\n').filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; listener?: string })
      .filter((l) => l.msg.startsWith('Server listening at'));
    assert.deepEqual(listening.map((l) => [l.listener, l.msg]), [
      [undefined, `Server listening at ${first.base}`],
      ['metrics', `Server listening at http://127.0.0.1:${metricsPort}`],
    ]);
  });

  /** Runs a second `keepwatch serve` on a store of its own; resolves when it exits, fails if it keeps running. */
  async function secondServer(port: number, extra: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const store = await createChildStore();
    stores.push(store);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { cwd: ROOT, env: childEnv(store, port, extra), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((ok) => child.once('close', (c) => ok(c)));
    clearTimeout(timer);
    assert.notEqual(child.signalCode, 'SIGKILL', `still running after 60 s: ${stdout}${stderr}`);
    return { code, stdout, stderr };
  }

  it('exits non-zero naming metrics.port, and closes the API listener it had opened', async () => {
    const apiPort = await freePort();
    const { code, stdout, stderr } = await secondServer(apiPort, { KEEPWATCH_METRICS__ENABLED: 'true', KEEPWATCH_METRICS__PORT: String(metricsPort) });
    assert.equal(code, 1, stdout + stderr);
    assert.match(stderr, new RegExp(`^metrics\\.port: cannot listen on 127\\.0\\.0\\.1:${metricsPort}: the address is already in use \\(EADDRINUSE\\)$`, 'm'));
    assert.doesNotMatch(stderr, /\n\s+at /, 'one line, no stack');
    assert.doesNotMatch(stdout + stderr, /keepwatch is serving/);
    assert.equal(await isListening(apiPort), false);
    assert.equal((await fetch(`${first.base}/healthz`)).status, 200, 'the first server is untouched');
  });

  it('exits non-zero naming http.port when the API port is taken', async () => {
    const { code, stdout, stderr } = await secondServer(first.port, {});
    assert.equal(code, 1, stdout + stderr);
    assert.match(stderr, new RegExp(`^http\\.port: cannot listen on 127\\.0\\.0\\.1:${first.port}: the address is already in use \\(EADDRINUSE\\)$`, 'm'));
    assert.doesNotMatch(stdout + stderr, /keepwatch is serving/);
  });
});
