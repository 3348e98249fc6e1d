// The processes of `npm run bench:pings` as bench/pings.ts drives them: a forked child with its
// IPC replies awaited by type, and the load generators (bench/pings-load.ts), one or more, whose
// windows and acknowledgements are summed back into one.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileTree, type CompiledTree } from './checks-build.js';
import type { LoadAcks, LoadWindow } from './pings-load.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/**
 * Where the processes' JavaScript is: compiled from src/ and bench/ (as `keepwatch serve` runs from
 * dist/), or null to run the TypeScript under tsx. tsx's transform names every function it creates
 * (esbuild's keepNames: a `__name` call per closure made), which costs the server CPU on every ping.
 */
let compiled: CompiledTree | null = null;

/** From here on, processes start from JavaScript compiled now. */
export function compileProcesses(): void {
  compiled = compileTree();
}

/** Removes the compiled tree, if any (the processes started from it must be done). */
export function removeCompiledProcesses(): void {
  compiled?.remove();
  compiled = null;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Every child still running, for a SIGINT or a failure to kill. */
export const live = new Set<ChildProcess>();

/** `nodeFlags`: node's own command-line flags for the process (`SERVE_NODE_FLAGS` for a Keepwatch server). */
export function startProcess(script: string, args: string[], nodeFlags: readonly string[] = []): ChildProcess {
  const stdio: ['ignore', 'inherit', 'pipe', 'ipc'] = ['ignore', 'inherit', 'pipe', 'ipc'];
  const child = compiled
    ? fork(join(compiled.benchDir, script.replace(/\.ts$/, '.js')), args, { execArgv: [...nodeFlags], stdio })
    : fork(here(script), args, { execArgv: ['--import', 'tsx', ...nodeFlags], stdio });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
  child.once('exit', (code, signal) => {
    live.delete(child);
    if (code && !signal) process.stderr.write(`${script} exited ${code}:\n${stderr}\n`);
  });
  live.add(child);
  return child;
}

export function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`process exited (${code}) before '${type}'`));
    const onMessage = (m: { type: string; message?: string }) => {
      if (m.type !== type && m.type !== 'error') return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      if (m.type === 'error') reject(new Error(m.message));
      else resolve(m as T);
    };
    child.once('exit', onExit);
    child.on('message', onMessage);
  });
}

/** The load generators: `paths` dealt round-robin, connections split. */
export class Load {
  private readonly clients: ChildProcess[] = [];
  private readonly shares: number[][] = [];

  constructor(private readonly origin: string, private readonly paths: readonly string[], private readonly clientCount: number, private readonly connections: number) {}

  async start(): Promise<void> {
    for (let k = 0; k < this.clientCount; k++) {
      const share = this.paths.map((_, i) => i).filter((i) => i % this.clientCount === k);
      const connections = Math.floor(this.connections / this.clientCount) + (k < this.connections % this.clientCount ? 1 : 0);
      const child = startProcess('./pings-load.ts', []);
      child.send({ type: 'start', origin: this.origin, paths: share.map((i) => this.paths[i]), connections });
      this.clients.push(child);
      this.shares.push(share);
    }
    await Promise.all(this.clients.map((c) => nextMessage(c, 'started')));
  }

  /** The window since the last mark, all clients together. */
  async mark(): Promise<LoadWindow> {
    const replies = this.clients.map((c) => nextMessage<{ window: LoadWindow }>(c, 'window'));
    for (const c of this.clients) c.send({ type: 'mark' });
    const windows = (await Promise.all(replies)).map((r) => r.window);
    const other: Record<string, number> = {};
    for (const w of windows) for (const [status, n] of Object.entries(w.other)) other[status] = (other[status] ?? 0) + n;
    return {
      seconds: Math.max(...windows.map((w) => w.seconds)), other,
      ok: sum(windows.map((w) => w.ok)), tooMany: sum(windows.map((w) => w.tooMany)), errors: sum(windows.map((w) => w.errors)),
      latenciesUs: windows.flatMap((w) => w.latenciesUs), cpuMs: sum(windows.map((w) => w.cpuMs)),
    };
  }

  /** Stops the load; 200s and last acknowledged send time per path, in `paths` order. */
  async stop(): Promise<LoadAcks> {
    const replies = this.clients.map((c) => nextMessage<LoadAcks>(c, 'acks'));
    for (const c of this.clients) c.send({ type: 'stop' });
    const out: LoadAcks = { acks: new Array<number>(this.paths.length).fill(0), lastAckSentAt: new Array<number>(this.paths.length).fill(0), errorSamples: [] };
    (await Promise.all(replies)).forEach((r, k) => {
      this.shares[k]!.forEach((i, j) => {
        out.acks[i] = r.acks[j]!;
        out.lastAckSentAt[i] = r.lastAckSentAt[j]!;
      });
      out.errorSamples.push(...r.errorSamples.filter((e) => !out.errorSamples.includes(e)));
    });
    for (const c of this.clients) c.kill();
    return out;
  }
}
