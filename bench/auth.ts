// `npm run bench:auth`: the per-call cost of TokenVerifier.verify on embedded PGlite: a first
// verification (store lookup + argon2id), one whose cache entry has lapsed (the row read again, no
// argon2 while its hash is unchanged), and one served from the token cache, so the value of
// `auth.token_cache_ttl_secs` is a figure. Not a test: nothing here asserts on time.
import { performance } from 'node:perf_hooks';
import { openPglite } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { createApiToken, TokenVerifier } from '../src/identity/api-tokens.js';
import { createOwner } from '../src/identity/users.js';
import { seedPlans } from '../src/plans/service.js';
import { systemClock } from '../src/shared/context.js';

const FRESH_CALLS = Number(process.env.BENCH_FRESH_CALLS ?? 200);
const CACHED_CALLS = Number(process.env.BENCH_CACHED_CALLS ?? 20_000);
const WARMUP_CALLS = 20;

interface Stats { calls: number; meanMs: number; p50Ms: number; p99Ms: number; maxMs: number }

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { calls: sorted.length, meanMs: sorted.reduce((s, v) => s + v, 0) / sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1)! };
}

async function time(calls: number, call: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await call();
    samples.push(performance.now() - start);
  }
  return samples;
}

const fmt = (ms: number): string => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`);

async function main(): Promise<void> {
  const db = await openPglite();
  try {
    await migrate(db);
    await seedPlans(db, {});
    const owner = await db.transaction((tx) => createOwner(tx, { email: 'bench@example.test', planId: 'team', orgName: 'bench', verified: true }));
    const { token } = await createApiToken(db, systemClock, {
      userId: owner.user_id, name: 'bench', scopes: ['full_access'], orgId: owner.org_id, expiresInDays: null, limit: null, actor: { type: 'operator' },
    });
    const verifier = new TokenVerifier(db, systemClock, 3_600_000);
    // A new verifier each call has never seen the token: every call reads the row and runs argon2id.
    const first = () => new TokenVerifier(db, systemClock, 3_600_000).verify(token);
    await time(WARMUP_CALLS, first);
    const fresh = stats(await time(FRESH_CALLS, first));

    // A verifier whose entries lapse at once: every call reads the row again, without argon2.
    const lapsing = new TokenVerifier(db, systemClock, 0);
    await time(WARMUP_CALLS, () => lapsing.verify(token));
    const lapsed = stats(await time(CACHED_CALLS, () => lapsing.verify(token)));

    // Cached: the same token, verified once, then served from memory.
    await verifier.verify(token);
    await time(WARMUP_CALLS, () => verifier.verify(token));
    const cached = stats(await time(CACHED_CALLS, () => verifier.verify(token)));

    const rows = [['first (store + argon2id)', fresh], ['lapsed (store only)', lapsed], ['cached', cached]] as const;
    process.stdout.write(`TokenVerifier.verify on PGlite (in memory), Node ${process.version}\n\n`);
    process.stdout.write(`${'path'.padEnd(26)}${'calls'.padStart(8)}${'mean'.padStart(12)}${'p50'.padStart(12)}${'p99'.padStart(12)}${'max'.padStart(12)}\n`);
    for (const [name, s] of rows) {
      process.stdout.write(`${name.padEnd(26)}${String(s.calls).padStart(8)}${fmt(s.meanMs).padStart(12)}${fmt(s.p50Ms).padStart(12)}${fmt(s.p99Ms).padStart(12)}${fmt(s.maxMs).padStart(12)}\n`);
    }
    const ratio = fresh.meanMs / cached.meanMs;
    process.stdout.write(`\nA cache hit is ${ratio.toFixed(0)}x cheaper on the mean; called one at a time it verifies about ` +
      `${Math.floor(1000 / fresh.meanMs)} fresh tokens/s against ${Math.floor(1000 / cached.meanMs)} cached.\n`);
  } finally {
    await db.close();
  }
}

await main();
