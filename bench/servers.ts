// The servers bench/api.ts measures. Each runs in a process of its own (bench/server-process.ts), so
// one server's JIT state, heap and store never weigh on the next one's figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { tuneProcessMemory } from '../src/process-memory.js';
import { createServices, type Services } from '../src/services.js';
import { randomToken } from '../src/shared/ids.js';

export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

export const REGIONS_BODY = { regions: [{ id: 'local', name: 'Local', city: null, country_code: null, continent: null, latitude: null, longitude: null }] };

export interface RunningServer {
  url: string;
  headers: Record<string, string>;
  close(): Promise<void>;
}

/** node:http answering GET /api/v1/regions's JSON, serialized per request, nothing else. */
export async function startBare(): Promise<RunningServer> {
  const server = createServer((_req, res) => {
    const body = JSON.stringify(REGIONS_BODY);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/regions`,
    headers: {},
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The sealing key of bench servers: their data are thrown away. */
const BENCH_KEK = Buffer.alloc(32, 11).toString('base64');

/**
 * Keepwatch as `serve` builds it (log level silent, metrics off) on PGlite, or on PostgreSQL at
 * `databaseUrl`, with one tenant holding a bound full_access token and a read budget that cannot
 * throttle the run.
 */
export async function startKeepwatch(
  databaseUrl: string | undefined, caps: Record<string, number> = {}, extraConfig: Record<string, string | number | boolean> = {},
): Promise<RunningServer & { token: string; base: string; services: Services }> {
  tuneProcessMemory();
  const dataDir = mkdtempSync(join(tmpdir(), 'keepwatch-bench-'));
  const operatorSecret = `bench-${randomToken(12)}`;
  const config = loadConfig({
    env: {},
    cwd: dataDir,
    overrides: {
      data_dir: dataDir, database_url: databaseUrl, 'log.level': 'silent', 'metrics.enabled': false,
      'operator.secret': operatorSecret, 'auth.fingerprint_salt': 'bench-salt', 'auth.fingerprint_salt_rotate': true,
      // Fixed, as the salt is: rounds of a bench boot servers with data dirs of their own on one database.
      'security.credentials_kek_base64': BENCH_KEK,
      ...extraConfig,
    },
  });
  const services = await createServices(config);
  const app = await buildApp(services);
  const close = async () => {
    await app.close();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const operator = async (method: 'POST' | 'PUT', url: string, payload: object) => {
      const res = await app.inject({ method, url, payload, headers: { authorization: `Bearer ${operatorSecret}` } });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json() as Record<string, string>;
    };
    const user = await operator('POST', '/operator/users', { email: `bench-${randomToken(6)}@example.test` });
    await operator('PUT', `/operator/accounts/${user.account_id}/overrides`, { caps: { api_reads_per_minute: 1_000_000_000, ...caps }, reason: 'benchmark' });
    const { token } = await operator('POST', `/operator/users/${user.user_id}/api-tokens`, { name: 'bench', scopes: ['full_access'], org_id: user.org_id });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `${base}/api/v1/regions`;
    const headers = { authorization: `Bearer ${token}` };
    const probe = await fetch(url, { headers });
    const body = await probe.text();
    if (probe.status !== 200 || body !== JSON.stringify(REGIONS_BODY)) throw new Error(`unexpected answer ${probe.status} ${body}`);
    return { url, headers, close, token: token!, base, services };
  } catch (err) {
    await close();
    throw err;
  }
}

/** DATABASE_URL as given, else a fresh database on the local server (dropped afterwards); null when none answers. */
export async function postgresTarget(): Promise<{ url: string; drop(): Promise<void> } | null> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, drop: async () => {} };
  const admin = new pg.Client({ connectionString: DEFAULT_PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return null;
  }
  const name = `kw_bench_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(DEFAULT_PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}


/**
 * Runs `script run <store> <url>` once per chosen store, each in a process of its own, and
 * collects the figures each child sends back; PostgreSQL gets a scratch database (see above).
 */
export async function measureStores<F>(script: string, only: ReadonlySet<string>, execArgv: string[] = []): Promise<F[]> {
  const measure = (store: string, url?: string): Promise<F> => new Promise((resolve, reject) => {
    const child = fork(script, ['run', store, url ?? ''], { execArgv: ['--import', 'tsx', ...execArgv] });
    child.once('message', (m: { figures?: F; error?: string }) => (m.figures ? resolve(m.figures) : reject(new Error(m.error))));
    child.once('exit', (code) => { if (code) reject(new Error(`${store}: exited ${code}`)); });
  });
  const results: F[] = [];
  if (only.has('pglite')) results.push(await measure('pglite'));
  if (only.has('postgres')) {
    const target = await postgresTarget();
    if (!target) process.stdout.write('PostgreSQL skipped: nothing answers (set DATABASE_URL)\n');
    else {
      try {
        results.push(await measure('postgres', target.url));
      } finally {
        await target.drop();
      }
    }
  }
  return results;
}
