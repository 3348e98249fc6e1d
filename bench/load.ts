// Drives autocannon in a child process, so the load generator never shares the measured server's
// event loop (the server runs in the bench process, on PGlite it must).
import { spawn } from 'node:child_process';
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

export function runLoad(options: LoadOptions): Promise<LoadResult> {
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
