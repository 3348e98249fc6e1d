// The load generator of `npm run bench:pings`, in a process of its own (or several: each gets a
// disjoint share of the tokens and of the connections). Keeps `connections` GETs in flight through
// one undici Pool, walking its ping paths round-robin, and counts per path the 200s it received:
// the acknowledgements the durability check holds the store to after the server is killed.
// Messages in: `start` (origin, paths, connections), `mark` (answers the window since the last mark
// and opens a new one), `stop` (stops issuing, settles what is in flight, answers the acks).
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface LoadStart { type: 'start'; origin: string; paths: string[]; connections: number }

/** One window between two marks. */
export interface LoadWindow {
  seconds: number;
  ok: number;
  tooMany: number;
  /** Answers other than 200 and 429, by status. */
  other: Record<string, number>;
  /** Requests that got no answer (refused, reset, timed out). */
  errors: number;
  /** Latency of each 200 in the window, µs, request start to status line. */
  latenciesUs: number[];
  /** This process's CPU time in the window, ms. */
  cpuMs: number;
}

/** After `stop`: 200s per path (same order as `paths`), and the start time (epoch ms) of each path's last acknowledged ping. */
export interface LoadAcks { acks: number[]; lastAckSentAt: number[]; errorSamples: string[] }

const send = (message: object): void => void process.send!(message);

function emptyWindow(): Omit<LoadWindow, 'seconds' | 'cpuMs'> {
  return { ok: 0, tooMany: 0, other: {}, errors: 0, latenciesUs: [] };
}

function runLoad(start: LoadStart): void {
  const pool = new Pool(start.origin, { connections: start.connections, pipelining: 1, connectTimeout: 5_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const acks = new Array<number>(start.paths.length).fill(0);
  const lastAckSentAt = new Array<number>(start.paths.length).fill(0);
  const errorSamples: string[] = [];
  let next = 0;
  let running = true;
  let window = emptyWindow();
  let windowStart = performance.now();
  let cpuStart = process.cpuUsage();

  async function connectionLoop(): Promise<void> {
    while (running) {
      const i = next;
      next = (next + 1) % start.paths.length;
      const sentAt = Date.now();
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: start.paths[i]!, method: 'GET' });
        const us = Math.round((performance.now() - t0) * 1000);
        // The status line is the acknowledgement: counted before the body, which may still be cut off.
        if (res.statusCode === 200) {
          acks[i]!++;
          lastAckSentAt[i] = sentAt;
          window.ok++;
          window.latenciesUs.push(us);
        } else if (res.statusCode === 429) window.tooMany++;
        else window.other[res.statusCode] = (window.other[res.statusCode] ?? 0) + 1;
        await res.body.dump().catch(() => undefined);
      } catch (err) {
        window.errors++;
        const code = (err as { code?: string }).code ?? (err as Error).message;
        if (errorSamples.length < 5 && !errorSamples.includes(code)) errorSamples.push(code);
        // A dead server refuses at once: do not spin.
        await new Promise((ok) => setTimeout(ok, 20));
      }
    }
  }

  const loops = Array.from({ length: start.connections }, connectionLoop);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'mark') {
      const now = performance.now();
      const cpu = process.cpuUsage(cpuStart);
      send({ type: 'window', window: { ...window, seconds: (now - windowStart) / 1000, cpuMs: (cpu.user + cpu.system) / 1000 } satisfies LoadWindow });
      window = emptyWindow();
      windowStart = now;
      cpuStart = process.cpuUsage();
    } else if (message.type === 'stop') {
      running = false;
      void Promise.all(loops)
        .then(() => pool.destroy())
        .then(() => send({ type: 'acks', acks, lastAckSentAt, errorSamples } satisfies LoadAcks & { type: string }));
    }
  });
  send({ type: 'started' });
}

process.once('message', (message: LoadStart) => runLoad(message));
