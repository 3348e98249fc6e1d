// `npm run bench:incidents`: 10,000 http monitors flapping through the incident engine at 1,000
// results a second (each monitor every 10 s, down for 5 results, up for 5), every transition paging
// one webhook channel served by a local receiver in its own process. Reports results folded per
// second, incidents opened and closed, notifications delivered per second, delivery lag (receiver
// arrival minus the result that caused it) p50/p99, CPU per result and RSS, per store. Each store
// runs in a process of its own. Not a test: nothing asserts on time. See bench/README.md.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { NotificationWorker } from '../src/notifications/index.js';
import { measureStores, startKeepwatch } from './servers.js';

const MONITORS = Number(process.env.BENCH_INCIDENTS_MONITORS ?? 10_000);
const RATE = Number(process.env.BENCH_INCIDENTS_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_INCIDENTS_SECONDS ?? 60);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'pglite,postgres').split(','));
/** Results per half-cycle: down this many times, then up as many. */
const HALF_CYCLE = 5;

interface Figures {
  store: string; results: number; seconds: number; offered: number; tailMs: number; maxBacklog: number; opened: number; closed: number; delivered: number;
  lagP50: number; lagP99: number; cpuMsPerResult: number; peakRssMb: number; backlog: number;
}

/** The receiver: answers 204 and reports each arrival's lag to the parent. */
function receiver(): void {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const body = JSON.parse(raw) as { event: string; incident: { started_at: string; ended_at: string | null } };
      const causedAt = Date.parse(body.event === 'recovered' ? body.incident.ended_at! : body.incident.started_at);
      process.send!({ lag: Date.now() - causedAt });
      res.writeHead(204);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
}

async function run(store: string, databaseUrl: string | undefined): Promise<Figures> {
  const lags: number[] = [];
  const recv = fork(fileURLToPath(import.meta.url), ['receiver'], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((ok) => recv.on('message', (m: { port?: number; lag?: number }) => {
    if (m.port) ok(m.port);
    if (m.lag !== undefined) lags.push(m.lag);
  }));
  const server = await startKeepwatch(databaseUrl, { max_targets: MONITORS * 2, max_notification_channels: 10, api_writes_per_minute: 1_000_000 },
    { 'security.allow_private_targets': true, 'checker.enabled': false });
  const s = server.services;
  const worker = new NotificationWorker(s, { pollMs: 100, batch: 200 });
  try {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server.base}${path}`, { method: 'POST', headers: { ...server.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
      return json;
    };
    const channel = await post('/api/v1/notification-channels', { name: 'receiver', config: { type: 'webhook', url: `http://127.0.0.1:${port}/hook` } });
    const created = await post('/api/v1/targets/bulk', {
      targets: Array.from({ length: MONITORS }, (_, i) => ({
        name: `flap ${i}`, check: { type: 'http', url: `https://93.184.216.34/${i}` }, interval: 60,
        alert_confirmations: 1, recovery_period_secs: 0, renotify_interval_secs: 0, alerts: [{ channel_id: channel.id }],
      })),
    });
    const targets = (created.targets as { id: string }[]).map((t) => t.id);
    const orgId = (await s.db.query<{ org_id: string }>('SELECT org_id FROM targets WHERE id = $1', [targets[0]]))[0]!.org_id;
    worker.start();

    // Every 10 ms, push the results due by now at RATE (from the elapsed time, so a late timer
    // catches up rather than lowering the offered rate), walking the monitors round-robin.
    const total = RATE * SECONDS;
    let sent = 0;
    const cpuStart = process.cpuUsage();
    const started = Date.now();
    let maxBacklog = 0;
    const sampler = setInterval(() => { maxBacklog = Math.max(maxBacklog, s.results.backlog); }, 100);
    await new Promise<void>((done) => {
      const timer = setInterval(() => {
        const now = new Date();
        const due = Math.min(total, Math.floor(((now.getTime() - started) * RATE) / 1000));
        for (; sent < due; sent++) {
          const round = Math.floor(sent / MONITORS);
          const status = Math.floor(round / HALF_CYCLE) % 2 === 0 ? 'down' : 'up';
          s.results.push({ targetId: targets[sent % MONITORS]!, orgId, region: 'local', status, duration_ms: 12, error: status === 'down' ? 'HTTP 500' : null, checkedAt: now, staleAfterMs: 30_000 });
        }
        if (sent >= total) {
          clearInterval(timer);
          done();
        }
      }, 10);
    });
    const offeredSeconds = (Date.now() - started) / 1000;
    await s.results.flush();
    clearInterval(sampler);
    const seconds = (Date.now() - started) / 1000;
    const tailMs = Math.round((seconds - offeredSeconds) * 1000);
    // Let the outbox drain (bounded), then read what happened.
    for (let i = 0; i < 100; i++) {
      const [pending] = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM notifications WHERE status = 'pending'`);
      if (!pending!.n) break;
      await new Promise((ok) => setTimeout(ok, 200));
    }
    const cpu = process.cpuUsage(cpuStart);
    const [counts] = await s.db.query<{ results: number; opened: number; closed: number; delivered: number; backlog: number }>(
      `SELECT (SELECT count(*)::int FROM check_results) AS results,
              (SELECT count(*)::int FROM incidents) AS opened,
              (SELECT count(*)::int FROM incidents WHERE status = 'resolved') AS closed,
              (SELECT count(*)::int FROM notifications WHERE status = 'delivered') AS delivered,
              (SELECT count(*)::int FROM notifications WHERE status = 'pending') AS backlog`);
    lags.sort((a, b) => a - b);
    return {
      store, seconds, offered: sent / offeredSeconds, tailMs, maxBacklog, ...counts!, lagP50: quantile(lags, 0.5), lagP99: quantile(lags, 0.99),
      cpuMsPerResult: (cpu.user + cpu.system) / 1000 / Math.max(1, counts!.results),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    await worker.stop();
    await server.close();
    recv.kill();
  }
}

async function main(): Promise<void> {
  const results = await measureStores<Figures>(fileURLToPath(import.meta.url), ONLY, []);
  process.stdout.write(`${MONITORS} monitors flapping (${HALF_CYCLE} down, ${HALF_CYCLE} up) at ${RATE} results/s for ${SECONDS} s, one webhook per transition; Node ${process.version}\n`);
  process.stdout.write('Goal: the engine keeps up with 1,000 results/s; delivery lag p99 under 2 s.\n\n');
  const cols: Array<[string, number, (r: Figures) => string]> = [
    ['offered/s', 10, (r) => r.offered.toFixed(0)],
    ['stored/s', 9, (r) => (r.results / r.seconds).toFixed(0)],
    ['tail', 8, (r) => `${r.tailMs} ms`],
    ['max queue', 10, (r) => String(r.maxBacklog)],
    ['opened', 8, (r) => String(r.opened)],
    ['closed', 8, (r) => String(r.closed)],
    ['sent/s', 8, (r) => (r.delivered / r.seconds).toFixed(0)],
    ['backlog', 9, (r) => String(r.backlog)],
    ['lag p50', 9, (r) => `${r.lagP50} ms`],
    ['lag p99', 9, (r) => `${r.lagP99} ms`],
    ['CPU/result', 12, (r) => `${r.cpuMsPerResult.toFixed(3)} ms`],
    ['peak RSS', 10, (r) => `${r.peakRssMb} MB`],
  ];
  process.stdout.write(`${'store'.padEnd(10)}${cols.map(([name, width]) => name.padStart(width)).join('')}\n`);
  for (const r of results) process.stdout.write(`${r.store.padEnd(10)}${cols.map(([, width, cell]) => cell(r).padStart(width)).join('')}\n`);
}

const [mode, store, url] = process.argv.slice(2);
if (mode === 'receiver') receiver();
else if (mode === 'run') {
  run(store!, url || undefined).then(
    (figures) => { process.send!({ figures }); process.exit(0); },
    (err: Error) => { process.send!({ error: err.stack ?? err.message }); process.exit(1); },
  );
} else {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
