// The bare loop of `npm run bench:checks`: `rate` HTTP GETs per second to the target server, each
// over a fresh connection (node:http with no agent: the socket from `createConnection`, as the http
// probe opens it) to the next of the same 127.a.b.c addresses the monitors use, the answer dropped
// on arrival as the http probe drops it when it needs no body.
// No scheduler, no store, no guard: what a check physically costs on this machine. Forked by
// bench/checks.ts, which reads this process's CPU from /proc; answers `count` with the requests
// answered and failed so far, and exits on `stop`.
import { request, type ClientRequestArgs } from 'node:http';
import { createConnection, type NetConnectOpts } from 'node:net';
import { addressOf } from './checks-shared.js';

const [port, rate, addresses] = process.argv.slice(2).map(Number) as [number, number, number];

const connect = (options: ClientRequestArgs) => createConnection(options as NetConnectOpts);
let sent = 0;
let answered = 0;
let failed = 0;
const started = performance.now();

function get(i: number): void {
  const req = request({ host: addressOf(i % addresses), port, path: '/', method: 'GET', createConnection: connect, headers: { 'user-agent': 'bench' } });
  req.once('response', (res) => {
    res.destroy();
    answered++;
  });
  req.once('error', () => { failed++; });
  req.end();
}

// Paced, not closed-loop: on a timer of about one request's spacing (1 ms at most often), whatever
// is due by now at `rate` per second, as the scheduler's timer releases checks as their slots come.
const timer = setInterval(() => {
  const due = Math.floor(((performance.now() - started) * rate) / 1000);
  while (sent < due) get(sent++);
}, Math.max(1, Math.floor(1000 / rate)));

process.on('message', (message: string) => {
  if (message === 'count') process.send!({ answered, failed });
  if (message === 'stop') {
    clearInterval(timer);
    process.exit(0);
  }
});
// Orphaned (the bench died): go too.
process.on('disconnect', () => process.exit(1));
process.send!({ ready: true });
