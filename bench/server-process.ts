// One measured server in its own process, driven by bench/api.ts over IPC:
// argv[2] is `bare` or `keepwatch`, argv[3] an optional PostgreSQL URL.
// Messages in: `cpu` (answers this process's CPU time), `prof-start` and `{ type: 'prof-stop', dir }`
// (an inspector CPU profile of the measured window only, written to `dir`), `stop`.
// Out: `ready` with url and headers, `cpu`, `prof-started`, `prof-stopped` with the path, `error`.
import { startBare, startKeepwatch, type RunningServer } from './servers.js';
import { startWindowProfile, type WindowProfile } from './window-profile.js';

const send = (message: object): void => void process.send!(message);

let server: RunningServer;
try {
  server = process.argv[2] === 'bare' ? await startBare() : await startKeepwatch(process.argv[3] || undefined);
  send({ type: 'ready', url: server.url, headers: server.headers });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
}

let profile: Promise<WindowProfile> | null = null;
process.on('message', (message: string | { type: string; dir: string }) => {
  if (message === 'cpu') send({ type: 'cpu', usage: process.cpuUsage() });
  if (message === 'stop') void server.close().then(() => process.exit(0));
  if (message === 'prof-start') {
    profile = startWindowProfile();
    void profile.then(() => send({ type: 'prof-started' }));
  }
  if (typeof message === 'object' && message.type === 'prof-stop') {
    const name = `api-${process.argv[2]}-${process.argv[3] ? 'postgres' : 'pglite'}-${process.pid}`;
    void profile!.then((p) => p.stop(message.dir, name)).then((path) => send({ type: 'prof-stopped', path }));
  }
});
