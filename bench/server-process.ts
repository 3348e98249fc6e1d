// One measured server in its own process, driven by bench/api.ts over IPC:
// argv[2] is `bare` or `keepwatch`, argv[3] an optional PostgreSQL URL.
// Messages in: `cpu` (answers this process's CPU time), `stop`. Out: `ready` with url and headers, `cpu`, `error`.
import { startBare, startKeepwatch, type RunningServer } from './servers.js';

const send = (message: object): void => void process.send!(message);

let server: RunningServer;
try {
  server = process.argv[2] === 'bare' ? await startBare() : await startKeepwatch(process.argv[3] || undefined);
  send({ type: 'ready', url: server.url, headers: server.headers });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
}

process.on('message', (message: string) => {
  if (message === 'cpu') send({ type: 'cpu', usage: process.cpuUsage() });
  if (message === 'stop') void server.close().then(() => process.exit(0));
});
