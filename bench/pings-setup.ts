// The monitors of `npm run bench:pings`: heartbeat monitors created through the bulk route, 10,000 a
// request, and each one's ping path read back from its heartbeat record (`ping_url`'s path: the bench
// hits the server's own port whatever `auth.public_base_url` says).
import { Pool } from 'undici';

/** The bulk route's cap per request. */
const BULK_MAX = 10_000;
/** Heartbeat records read at once. */
const READ_CONCURRENCY = 32;

export interface BenchHeartbeat { targetId: string; path: string }

export async function createHeartbeats(base: string, headers: Record<string, string>, count: number): Promise<BenchHeartbeat[]> {
  const ids: string[] = [];
  for (let from = 0; from < count; from += BULK_MAX) {
    const targets = Array.from({ length: Math.min(BULK_MAX, count - from) }, (_, i) => ({
      name: `pings ${from + i}`, check: { type: 'heartbeat', period: 3_600_000, grace: 600_000 },
    }));
    const res = await fetch(`${base}/api/v1/targets/bulk`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ targets }) });
    const body = await res.text();
    if (res.status !== 201) throw new Error(`bulk create: ${res.status} ${body.slice(0, 500)}`);
    ids.push(...(JSON.parse(body) as { targets: { id: string }[] }).targets.map((t) => t.id));
  }

  const pool = new Pool(base, { connections: READ_CONCURRENCY });
  const out = new Array<BenchHeartbeat>(ids.length);
  let next = 0;
  const reader = async () => {
    for (let i = next++; i < ids.length; i = next++) out[i] = { targetId: ids[i]!, path: await pingPath(pool, headers, ids[i]!) };
  };
  try {
    await Promise.all(Array.from({ length: READ_CONCURRENCY }, reader));
  } finally {
    await pool.close();
  }
  return out;
}

/** The record's ping URL, waited for a while: the spec lets bulk-created monitors get theirs within about 30 s. */
async function pingPath(pool: Pool, headers: Record<string, string>, id: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await pool.request({ path: `/api/v1/targets/${id}/heartbeat`, method: 'GET', headers });
    const body = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/targets/${id}/heartbeat: ${res.statusCode} ${body.slice(0, 300)}`);
    const url = (JSON.parse(body) as { ping_url?: string | null }).ping_url;
    if (url) return new URL(url).pathname;
    if (Date.now() > deadline) throw new Error(`${id}: no ping_url after 60 s`);
    await new Promise((ok) => setTimeout(ok, 500));
  }
}
