// Runs `keepwatch serve` (or another CLI command) as a real child process on a temp data dir and,
// when DATABASE_URL is set, on a fresh PostgreSQL database of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomToken } from '../../src/shared/ids.js';
import { cloneTemplateDatabase, pgliteTemplateDir, usePostgres, withAdmin } from '../helpers/store.js';

export const ROOT = resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** A temp data dir, and on PostgreSQL a database of its own. */
export interface ChildStore { dataDir: string; databaseUrl?: string; drop(): Promise<void> }

/**
 * A store for a child process: already migrated, as one that has run before (creating and
 * migrating a store costs a child seconds), or with `empty`, as on a first start.
 */
export async function createChildStore(options: { empty?: boolean } = {}): Promise<ChildStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'keepwatch-child-'));
  if (!usePostgres) {
    if (!options.empty) cpSync(await pgliteTemplateDir(), join(dataDir, 'pg'), { recursive: true });
    return { dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `kw_c_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  if (options.empty) await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  else await cloneTemplateDatabase(name);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    async drop() {
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The environment of a child CLI process: only what the test chooses, plus PATH and HOME. */
export function childEnv(store: ChildStore, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH, HOME: process.env.HOME,
    PORT: String(port),
    KEEPWATCH_DATA_DIR: store.dataDir,
    KEEPWATCH_METRICS__ENABLED: 'false',
    KEEPWATCH_LOG__LEVEL: 'warn',
    ...(store.databaseUrl && { DATABASE_URL: store.databaseUrl }),
    ...extra,
  };
}

export interface RunResult { code: number | null; stdout: string; stderr: string }

/** Runs `node --import tsx src/main.ts ...args` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', fail);
    child.on('close', (code) => ok({ code, stdout, stderr }));
  });
}

export interface ChildServer { child: ChildProcess; base: string; port: number; output(): string; kill(signal?: NodeJS.Signals): Promise<void> }

/** Starts `keepwatch serve` and waits until `/readyz` answers 200. */
export async function startChildServer(store: ChildStore, extra: Record<string, string> = {}): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT, env: childEnv(store, port, extra), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const server: ChildServer = {
    child, port, base: `http://127.0.0.1:${port}`, output: () => output,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`${server.base}/readyz`)).status === 200) return server;
    } catch { /* not listening yet */ }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  await server.kill();
  throw new Error(`server not ready within 60 s: ${output}`);
}
