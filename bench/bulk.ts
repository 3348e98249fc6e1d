// `npm run bench:bulk`: bulk-create 10,000 http monitors in one request, then list them page by
// page, on each store; reports times and the server process's peak RSS. Each store runs in a
// process of its own (this file with `run <store> [url]`), so one's heap never weighs on the next.
// Not a test: nothing here asserts on time. See bench/README.md.
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { measureStores, startKeepwatch } from './servers.js';

const COUNT = Number(process.env.BENCH_BULK_COUNT ?? 10_000);
const PAGE = Number(process.env.BENCH_BULK_PAGE ?? 1000);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'pglite,postgres').split(','));

interface Figures { store: string; createMs: number; listMs: number; pages: number; rssBeforeMb: number; peakRssMb: number; bodyMb: number }

const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024);

/** In the child: one store, one bulk create, then the listing. */
async function run(store: string, databaseUrl: string | undefined): Promise<Figures> {
  const server = await startKeepwatch(databaseUrl, { max_targets: COUNT * 2, api_writes_per_minute: 1_000_000 });
  try {
    const headers = { ...server.headers, 'content-type': 'application/json' };
    const body = JSON.stringify({
      targets: Array.from({ length: COUNT }, (_, i) => ({
        name: `bench ${i}`, check: { type: 'http', url: `https://93.184.216.34/health/${i}`, headers: { 'x-bench': String(i) } },
        tags: ['bench', `shard-${i % 16}`], interval: 60,
      })),
    });
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const start = performance.now();
    const res = await fetch(`${server.base}/api/v1/targets/bulk`, { method: 'POST', headers, body });
    const answer = await res.text();
    const createMs = performance.now() - start;
    if (res.status !== 201) throw new Error(`bulk create: ${res.status} ${answer.slice(0, 500)}`);

    const listStart = performance.now();
    let pages = 0;
    for (let offset = 0; ; offset += PAGE) {
      const page = await fetch(`${server.base}/api/v1/targets?limit=${PAGE}&offset=${offset}`, { headers: server.headers });
      const json = (await page.json()) as { targets: unknown[]; total: number };
      pages++;
      if (offset + PAGE >= json.total) break;
    }
    const listMs = performance.now() - listStart;
    // ru_maxrss is in kilobytes: the process's high-water mark, request handling included.
    return { store, createMs, listMs, pages, rssBeforeMb: mb(rssBefore), peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024), bodyMb: mb(body.length) };
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const results = await measureStores<Figures>(fileURLToPath(import.meta.url), ONLY, ['--expose-gc']);
  process.stdout.write(`Bulk create of ${COUNT} http monitors in one request, then GET /api/v1/targets ${PAGE} at a time; Node ${process.version}\n\n`);
  process.stdout.write(`${'store'.padEnd(10)}${'create'.padStart(10)}${'per 1k'.padStart(10)}${'list all'.padStart(11)}${'pages'.padStart(7)}${'body'.padStart(8)}${'RSS before'.padStart(12)}${'peak RSS'.padStart(10)}\n`);
  for (const r of results) {
    process.stdout.write(`${r.store.padEnd(10)}${`${(r.createMs / 1000).toFixed(2)} s`.padStart(10)}${`${(r.createMs / (COUNT / 1000)).toFixed(0)} ms`.padStart(10)}`
      + `${`${(r.listMs / 1000).toFixed(2)} s`.padStart(11)}${String(r.pages).padStart(7)}${`${r.bodyMb} MB`.padStart(8)}${`${r.rssBeforeMb} MB`.padStart(12)}${`${r.peakRssMb} MB`.padStart(10)}\n`);
  }
  process.stdout.write('\nGoal: 10,000 created in under 2 s on PostgreSQL and under 4 s on PGlite.\n');
}

if (process.argv[2] === 'run') {
  // Forked by main(), or run by hand (`tsx bench/bulk.ts run pglite`, e.g. under --cpu-prof): then it prints.
  const reply = (message: object, code: number) => (process.send ? process.send(message, () => process.exit(code)) : (console.log(message), process.exit(code)));
  run(process.argv[3]!, process.argv[4] || undefined)
    .then((figures) => reply({ figures }, 0))
    .catch((err: unknown) => reply({ error: err instanceof Error ? err.stack : String(err) }, 1));
} else {
  await main();
}
