// Rate budgets (service-api.md, "Rate budgets", Limits 5). One-minute windows per (subject, category),
// checked for the account first and then for the user. Nodes share counts through `rate_counters`:
// each node counts locally and adds its count to the store every `syncIntervalMs`, learning the
// others' counts back. A lone node is exact; N nodes may overshoot by what the others admitted
// since their last sync (bounded by N x budget x sync interval / 60 s).
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import { valuesList } from '../shared/batch-writer.js';
import { SUPPORT_PER_MINUTE, type PlanCaps, type RateColumn } from './catalog.js';

export type RateCategory = RateColumn | 'support';

const WINDOW_MS = 60_000;

/** The category of a request, from its path and method; null is not limited. */
export function rateCategoryOf(method: string, url: string): RateCategory | null {
  const path = url.split('?', 1)[0]!.replace(/\/+$/, '');
  const isMcp = path === '/mcp' || path.startsWith('/mcp/');
  if (!path.startsWith('/api/v1/') && !isMcp) return null;
  if (isMcp) return 'api_reads_per_minute';
  if (path.endsWith('/support')) return 'support';
  if (path.includes('/bulk') || path.endsWith('/duplicate')) return 'bulk_ops_per_minute';
  if (path.endsWith('/test')) return 'test_now_per_minute';
  if (path.endsWith('/check-now')) return 'check_now_per_minute';
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 'api_reads_per_minute' : 'api_writes_per_minute';
}

export function budgetOf(caps: PlanCaps, category: RateCategory): number | null {
  return category === 'support' ? SUPPORT_PER_MINUTE : caps[category];
}

interface Counter { window: number; synced: number; pending: number }

export interface Subject { kind: 'account' | 'user'; id: string }

export type Verdict = { allowed: true } | { allowed: false; subject: Subject; retryAfterSecs: number };

export class RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private syncs = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly syncIntervalMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.sync(), this.syncIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sync();
  }

  /** Admits one request against each subject's budget, in order; counts it only when all admit. */
  take(subjects: readonly Subject[], category: RateCategory, limit: number | null): Verdict {
    if (limit === null) return { allowed: true };
    const now = this.clock.now().getTime();
    const window = Math.floor(now / WINDOW_MS);
    const counters = subjects.map((s) => this.counter(`${s.kind}:${s.id}:${category}`, window));
    for (let i = 0; i < counters.length; i++) {
      const c = counters[i]!;
      if (c.synced + c.pending >= limit) {
        return { allowed: false, subject: subjects[i]!, retryAfterSecs: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) };
      }
    }
    for (const c of counters) c.pending++;
    return { allowed: true };
  }

  private counter(key: string, window: number): Counter {
    let c = this.counters.get(key);
    if (!c || c.window !== window) {
      c = { window, synced: 0, pending: 0 };
      this.counters.set(key, c);
    }
    return c;
  }

  /** Pushes local counts, learns the shared totals, forgets finished windows. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.pushCounts()).catch((err) => this.log.warn({ err }, 'rate budget sync failed'));
    return this.syncing;
  }

  private async pushCounts(): Promise<void> {
    const current = Math.floor(this.clock.now().getTime() / WINDOW_MS);
    const batch: [string, Counter, number][] = [];
    for (const [key, c] of this.counters) {
      if (c.window < current) this.counters.delete(key);
      if (c.pending > 0) batch.push([key, c, c.pending]);
    }
    if (!batch.length) return;
    const rows = await this.db.query<{ key: string; window_start: Date; count: number }>(
      `INSERT INTO rate_counters (key, window_start, count) VALUES ${valuesList(batch.length, 3)}
       ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + EXCLUDED.count
       RETURNING key, window_start, count`,
      batch.flatMap(([key, c, pending]) => [key, new Date(c.window * WINDOW_MS), pending]));
    const totals = new Map(rows.map((r) => [`${r.key}@${r.window_start.getTime() / WINDOW_MS}`, r.count]));
    for (const [key, c, pushed] of batch) {
      c.pending -= pushed;
      c.synced = totals.get(`${key}@${c.window}`) ?? c.synced + pushed;
    }
    if (++this.syncs % 60 === 0) {
      await this.db.query('DELETE FROM rate_counters WHERE window_start < $1', [new Date((current - 2) * WINDOW_MS)]);
    }
  }
}
