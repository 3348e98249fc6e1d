// Drives the load generator in a child process, so it never shares the measured server's event loop.
// wrk (Debian package `wrk`) is preferred when installed: written in C and run on one thread, it
// leaves the other core to the server, where autocannon (Node) needs most of a core of its own on
// this 2-core machine and so depresses every figure. BENCH_LOAD=autocannon forces autocannon.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AUTOCANNON_CLI = require.resolve('autocannon/autocannon.js');

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  durationSecs: number;
}

export interface LoadResult {
  requestsPerSec: number;
  p99Ms: number;
  p50Ms: number;
  total: number;
  /** Answers outside 2xx, and socket errors or timeouts: both must be zero for a valid figure. */
  non2xx: number;
  errors: number;
}

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p99: number; p50: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

export const loadGenerator: 'wrk' | 'autocannon' =
  process.env.BENCH_LOAD !== 'autocannon' && spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon';

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  return loadGenerator === 'wrk' ? runWrk(options) : runAutocannon(options);
}

function collect(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}: ${err.trim()}`))));
  });
}

const MS_PER_UNIT: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

/** `  99%    5.12ms` lines of `wrk --latency`. */
function wrkPercentile(out: string, percent: number): number {
  const match = new RegExp(`^\\s+${percent}(?:\\.0+)?%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
  return match ? Number(match[1]) * MS_PER_UNIT[match[2]!]! : NaN;
}

async function runWrk(options: LoadOptions): Promise<LoadResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.durationSecs}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  args.push(options.url);
  const out = await collect('wrk', args);
  const number = (re: RegExp): number => Number(re.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSec: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: wrkPercentile(out, 50),
    p99Ms: wrkPercentile(out, 99),
    total: number(/(\d+) requests in/),
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const args = [AUTOCANNON_CLI, '--json', '-c', String(options.connections), '-d', String(options.durationSecs)];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}=${value}`);
  args.push(options.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) return reject(new Error(`autocannon exited ${code}: ${err.trim()}`));
      const json = JSON.parse(line) as AutocannonJson;
      resolve({
        requestsPerSec: json.requests.average,
        p99Ms: json.latency.p99,
        p50Ms: json.latency.p50,
        total: json.requests.total,
        non2xx: json.non2xx,
        errors: json.errors + json.timeouts,
      });
    });
  });
}
