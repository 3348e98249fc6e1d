// The measured server of `npm run bench:pings`, in a process of its own so the bench can SIGKILL it:
// argv[2] is `bare` (node:http answering 200 "OK" to any path; argv[3] a delay in ms, see
// `--bare-delay`) or `keepwatch`, argv[3] an optional PostgreSQL URL (else PGlite in a temporary
// directory), argv[4] the tenant's max_targets.
// Out: `ready` with base, headers and the data dir (kept after a SIGKILL: the bench reopens the
// PGlite store there, then removes it). In: `stop` (a graceful close, for the bare server);
// `prof-start` and `prof-stop` (an inspector CPU profile of the measured window, written to `dir`).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startKeepwatch } from './servers.js';
import { startWindowProfile, type WindowProfile } from './window-profile.js';

export interface ServerReady { type: 'ready'; base: string; headers: Record<string, string>; dataDir?: string }

const send = (message: object): void => void process.send!(message);

/** `delayMs` > 0: requests are held and answered together `delayMs` after the first of a group, as a group commit would. */
async function startBarePings(delayMs: number): Promise<{ ready: ServerReady; close(): Promise<void> }> {
  const answer = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 2 });
    res.end('OK');
  };
  let held: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    if (delayMs <= 0) return answer(res);
    held.push(res);
    if (held.length > 1) return;
    setTimeout(() => {
      const group = held;
      held = [];
      group.forEach(answer);
    }, delayMs);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ready: { type: 'ready', base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, headers: {} },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function startKeepwatchPings(databaseUrl: string | undefined, maxTargets: number): Promise<{ ready: ServerReady; close(): Promise<void> }> {
  const server = await startKeepwatch(databaseUrl, { max_targets: maxTargets, api_writes_per_minute: 1_000_000 });
  return { ready: { type: 'ready', base: server.base, headers: server.headers, dataDir: server.services.dataDir }, close: server.close };
}

try {
  const [kind, ...args] = process.argv.slice(2);
  const server = kind === 'bare' ? await startBarePings(Number(args[0] || 0)) : await startKeepwatchPings(args[0] || undefined, Number(args[1]));
  let profile: Promise<WindowProfile> | null = null;
  process.on('message', (message: string | { type: string; dir?: string }) => {
    if (message === 'stop') void server.close().then(() => process.exit(0));
    if (typeof message !== 'object') return;
    if (message.type === 'prof-start') {
      profile = startWindowProfile();
      void profile.then(() => send({ type: 'prof-started' }));
    }
    if (message.type === 'prof-stop') {
      void profile!.then((p) => p.stop(message.dir!, `pings-${process.pid}`)).then((path) => send({ type: 'prof-stopped', path }));
    }
  });
  send(server.ready);
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
}
