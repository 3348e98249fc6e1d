// A Keepwatch process of `npm run bench:checks`, forked by bench/checks.ts with argv[2] a mode and
// argv[3] the options as JSON:
//  - `seed`: one tenant (plan floor lowered to 10 s by an operator override) and `monitors` http
//    monitors at a 10 s interval, created through POST /api/v1/targets/bulk as bench/bulk.ts does,
//    each with an address of its own (127.a.b.c) on the target server's port; then it exits, so the
//    engine process measured next boots on a populated store as `keepwatch serve` would.
//  - `engine`: what `keepwatch serve` runs (services, the app listening, the check engine), with
//    `security.allow_private_targets` on so the loopback targets pass the guard. Answers IPC:
//    `status`, `results` (what the store holds, for the analysis after the window), `prof-start` /
//    `prof-stop` (an inspector CPU profile of the measured window only), `stmts-start` /
//    `stmts-stop` (time spent awaiting each statement over the window), `stop`.
import { Registry } from 'prom-client';
import { buildApp } from '../src/app.js';
import { startCheckEngine } from '../src/checks/index.js';
import { loadConfig, type Config } from '../src/config/load.js';
import type { Db, Executor, QueryOptions } from '../src/db/db.js';
import { tuneProcessMemory } from '../src/process-memory.js';
import { createServices } from '../src/services.js';
import {
  addressOf, BULK_MAX, COUNT_SQL, INTERVAL_SECS, RESULTS_SQL, resultColumnsOf, TARGETS_SQL, type NodeOptions, type NodeStatus, type ResultRow, type StatementTime,
} from './checks-shared.js';
import { startWindowProfile, type WindowProfile } from './window-profile.js';

/** Tuning keys may come from the environment (`KEEPWATCH_PGLITE__SHARED_BUFFERS_MB=32`); the bench's own overrides win. */
function configOf(o: NodeOptions): Config {
  return loadConfig({
    env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('KEEPWATCH_') && name !== 'KEEPWATCH_CONFIG')),
    cwd: o.dataDir,
    overrides: {
      data_dir: o.dataDir, database_url: o.databaseUrl, 'log.level': 'warn', 'metrics.enabled': false,
      'operator.secret': o.operatorSecret, 'auth.fingerprint_salt': 'bench-salt', 'auth.fingerprint_salt_rotate': true,
      'security.credentials_kek_base64': o.kek, 'security.allow_private_targets': true, 'checker.enabled': true,
    },
  });
}

async function seed(o: NodeOptions): Promise<object> {
  const services = await createServices(configOf(o));
  const app = await buildApp(services);
  try {
    const call = async (method: 'POST' | 'PUT', url: string, payload: object, headers: Record<string, string>) => {
      const res = await app.inject({ method, url, payload, headers });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 500)}`);
      return res.json() as Record<string, string>;
    };
    const operator = { authorization: `Bearer ${o.operatorSecret}` };
    const user = await call('POST', '/operator/users', { email: 'bench-checks@example.test' }, operator);
    await call('PUT', `/operator/accounts/${user.account_id}/overrides`, {
      caps: { max_targets: o.monitors + 100, min_check_interval_secs: INTERVAL_SECS, api_writes_per_minute: 1_000_000, api_reads_per_minute: 1_000_000 },
      reason: 'benchmark',
    }, operator);
    const { token } = await call('POST', `/operator/users/${user.user_id}/api-tokens`, { name: 'bench', scopes: ['full_access'], org_id: user.org_id }, operator);
    const started = performance.now();
    for (let from = 0; from < o.monitors; from += BULK_MAX) {
      const targets = [];
      for (let i = from; i < Math.min(o.monitors, from + BULK_MAX); i++) {
        targets.push({ name: `site ${i}`, check: { type: 'http', url: `http://${addressOf(i)}:${o.port}/` }, interval: INTERVAL_SECS });
      }
      await call('POST', '/api/v1/targets/bulk', { targets }, { authorization: `Bearer ${token}` });
    }
    return { seeded: o.monitors, seedMs: performance.now() - started };
  } finally {
    await app.close();
    await services.close();
  }
}

/**
 * Time awaited per statement (by its first 90 characters), once `wrapDb` wraps the store.
 * PGlite runs one statement at a time, so there it is close to each statement's own cost.
 */
class StatementTimes {
  private readonly times = new Map<string, { calls: number; ms: number }>();
  on = false;

  wrap(executor: Executor): Executor {
    const query = executor.query.bind(executor);
    executor.query = async <T>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]> => {
      if (!this.on) return query<T>(sql, params, options);
      const started = performance.now();
      try {
        return await query<T>(sql, params, options);
      } finally {
        const key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
        const entry = this.times.get(key) ?? { calls: 0, ms: 0 };
        entry.calls++;
        entry.ms += performance.now() - started;
        this.times.set(key, entry);
      }
    };
    return executor;
  }

  /** The store's transactions hand out executors of their own: those are wrapped too. */
  wrapDb(db: Db): void {
    this.wrap(db);
    const transaction = db.transaction.bind(db);
    db.transaction = (fn) => transaction((tx) => fn(this.wrap(tx)));
  }

  take(): StatementTime[] {
    const out = [...this.times].map(([sql, t]) => ({ sql, ...t })).sort((a, b) => b.ms - a.ms);
    this.times.clear();
    return out;
  }
}

async function engine(o: NodeOptions): Promise<void> {
  tuneProcessMemory();
  const services = await createServices(configOf(o));
  const statements = new StatementTimes();
  if (o.statements) statements.wrapDb(services.db);
  const app = await buildApp(services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  // As `keepwatch serve` runs it with metrics on: the scheduler's counters and lag histogram in a registry.
  const registry = new Registry();
  const scheduler = await startCheckEngine(services, { registry, ...(o.leaseTtlMs && { leaseTtlMs: o.leaseTtlMs }) });
  let profile: WindowProfile | undefined;

  /** keepwatch_checks_total and friends, and the lag histogram's cumulative buckets (`le` → count). */
  const counters = async (): Promise<Record<string, number>> => {
    const out: Record<string, number> = {};
    for (const metric of await registry.getMetricsAsJSON()) {
      for (const v of metric.values as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>) {
        const name = v.metricName ?? metric.name;
        out[v.labels.le === undefined ? name : `${name}{le=${v.labels.le}}`] = v.value;
      }
    }
    return out;
  };

  const mb = (bytes: number): number => Math.round(bytes / 1048576);
  const memory = (): NodeStatus['memory'] => {
    const m = process.memoryUsage();
    const pglite = services.db.kind === 'pglite' ? (services.db as { pglite?: { Module: { wasmMemory: WebAssembly.Memory } } }).pglite : undefined;
    return { heapUsed: mb(m.heapUsed), heapTotal: mb(m.heapTotal), external: mb(m.external), wasm: pglite ? mb(pglite.Module.wasmMemory.buffer.byteLength) : null };
  };

  const handlers: Record<string, (m: Record<string, unknown>) => Promise<object>> = {
    status: async () => ({ scheduled: scheduler.scheduledCount, shards: scheduler.leases.owned(), counters: await counters(), memory: memory() } satisfies NodeStatus),
    // Neither waits for the writer's backlog (an overloaded engine's could be long): the bench polls
    // `count` until it stops growing, then reads.
    results: async (m) => {
      const window = [new Date(m.from as number), new Date(m.to as number)];
      return resultColumnsOf(await services.db.query<ResultRow>(RESULTS_SQL, window), await services.db.query<{ id: string }>(TARGETS_SQL));
    },
    count: async (m) => {
      const [row] = await services.db.query<{ n: number }>(COUNT_SQL, [new Date(m.from as number), new Date(m.to as number)]);
      return { n: row!.n };
    },
    // After the window: what the heap holds once garbage is gone (the engine runs with --expose-gc).
    'live-heap': async () => {
      (globalThis as { gc?: () => void }).gc?.();
      return { mb: mb(process.memoryUsage().heapUsed) };
    },
    'prof-start': async () => {
      profile = await startWindowProfile();
      return {};
    },
    'prof-stop': async (m) => ({ path: await profile!.stop(m.dir as string, `engine-${process.pid}`) }),
    'stmts-start': async () => {
      statements.take();
      statements.on = true;
      return {};
    },
    'stmts-stop': async () => {
      statements.on = false;
      return { statements: statements.take() };
    },
    stop: async () => {
      await scheduler.stop();
      await app.close();
      await services.close();
      return {};
    },
  };

  process.on('message', (m: { id: number; type: string } & Record<string, unknown>) => {
    handlers[m.type]!(m).then(
      (answer) => process.send!({ id: m.id, answer }, () => { if (m.type === 'stop') process.exit(0); }),
      (err: unknown) => process.send!({ id: m.id, error: err instanceof Error ? err.stack : String(err) }),
    );
  });
  // Orphaned (the bench died): go too.
  process.on('disconnect', () => process.exit(1));
  process.send!({ id: 0, answer: { ready: true, scheduled: scheduler.scheduledCount } });
}

const options = JSON.parse(process.argv[3]!) as NodeOptions;
if (process.argv[2] === 'seed') {
  seed(options).then(
    (answer) => process.send!({ id: 0, answer }, () => process.exit(0)),
    (err: unknown) => process.send!({ id: 0, error: err instanceof Error ? err.stack : String(err) }, () => process.exit(1)),
  );
} else {
  engine(options).catch((err: unknown) => process.send!({ id: 0, error: err instanceof Error ? err.stack : String(err) }, () => process.exit(1)));
}
