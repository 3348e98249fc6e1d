// The monitored site of `npm run bench:checks`: node:http on 0.0.0.0, so every 127.x.y.z address
// reaches it (the bench gives each monitor an address of its own, which keeps the per-(org, host,
// port) throttle out of the way as it would be with real, distinct sites). Run in a process of its
// own so its CPU is never counted as the engine's or the bare loop's. Sends `{port}` once listening;
// `stop` closes it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const BODY = 'ok\n';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': BODY.length });
  res.end(BODY);
});
// A burst of fresh connections must never overflow the accept queue.
server.listen({ port: 0, host: '0.0.0.0', backlog: 4096 }, () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});

// Orphaned (the bench died): go too.
process.on('disconnect', () => process.exit(1));
process.on('message', (message: string) => {
  if (message === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
