// Rate budgets (service-api.md, "Rate budgets", Limits 5). One-minute windows per (subject, category),
// checked for the account first and then for the user. Nodes share counts through `rate_counters`:
// each node counts locally and, every `syncIntervalMs`, adds its counts to the store and reads back
// the window's totals of every node. A lone node is exact; N nodes may overshoot by what the others
// admitted since their last sync (bounded by N x budget x sync interval / 60 s).
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import { valuesList } from '../shared/batch-writer.js';
import { SUPPORT_PER_MINUTE, type PlanCaps, type RateColumn } from './catalog.js';

export type RateCategory = RateColumn | 'support';

const WINDOW_MS = 60_000;
/** Rows per insert: three parameters each, under PostgreSQL's 65535-parameter ceiling. */
const PUSH_CHUNK = 5_000;

/** The category of a request, from its path and method; null is not limited. */
export function rateCategoryOf(method: string, url: string): RateCategory | null {
  let path = routedPath(url);
  // The router decodes escapes before matching (`/targets/%62ulk` is the bulk route): so do we.
  if (path.includes('%')) path = decodeLikeRouter(path);
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '');
  if (path === '/mcp' || path.startsWith('/mcp/')) return 'api_reads_per_minute';
  if (!path.startsWith('/api/v1/')) return null;
  if (path.endsWith('/support')) return 'support';
  if (path.includes('/bulk') || path.endsWith('/duplicate')) return 'bulk_ops_per_minute';
  if (path.endsWith('/test')) return 'test_now_per_minute';
  if (path.endsWith('/check-now')) return 'check_now_per_minute';
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 'api_reads_per_minute' : 'api_writes_per_minute';
}

const ABSOLUTE_FORM_RE = /^https?:\/\/[^/?#]*/i;

/**
 * The part of a request target the router matches: the path of an absolute-form target
 * (`GET http://host/api/v1/regions`), cut where the router cuts it, at `?` or `#`. Read otherwise,
 * either form would route to a budgeted endpoint while escaping its budget.
 */
function routedPath(url: string): string {
  let path = url;
  if (!path.startsWith('/')) {
    const origin = ABSOLUTE_FORM_RE.exec(path);
    if (origin) path = path.slice(origin[0].length);
  }
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  return path || '/';
}

/** One pass of percent-decoding for ASCII escapes, keeping an escaped `/` (the router keeps it inside one segment). */
function decodeLikeRouter(path: string): string {
  return path.replace(/%([0-7][0-9a-fA-F])/g, (escape, hex: string) => (hex.toLowerCase() === '2f' ? escape : String.fromCharCode(parseInt(hex, 16))));
}

export function budgetOf(caps: PlanCaps, category: RateCategory): number | null {
  return category === 'support' ? SUPPORT_PER_MINUTE : caps[category];
}

interface Counter { window: number; synced: number; pending: number }

export interface Subject { kind: 'account' | 'user'; id: string }

export type Verdict = { allowed: true } | { allowed: false; subject: Subject; retryAfterSecs: number };

const ADMITTED: Verdict = Object.freeze({ allowed: true });

/** Counters by subject kind, subject id and category: lookups on the request path build no key strings. */
type CounterTable = Record<Subject['kind'], Map<string, Map<string, Counter>>>;

export class RateLimiter {
  private readonly counters: CounterTable = { account: new Map(), user: new Map() };
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
    if (limit === null) return ADMITTED;
    const now = this.clock.now().getTime();
    const window = Math.floor(now / WINDOW_MS);
    for (const subject of subjects) {
      const c = this.counter(subject.kind, subject.id, category, window);
      if (c.synced + c.pending >= limit) {
        return { allowed: false, subject, retryAfterSecs: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) };
      }
    }
    for (const subject of subjects) this.counter(subject.kind, subject.id, category, window).pending++;
    return ADMITTED;
  }

  private counter(kind: Subject['kind'], id: string, category: string, window: number): Counter {
    let byCategory = this.counters[kind].get(id);
    if (!byCategory) this.counters[kind].set(id, (byCategory = new Map()));
    let c = byCategory.get(category);
    if (!c || c.window !== window) byCategory.set(category, (c = { window, synced: 0, pending: 0 }));
    return c;
  }

  /** Pushes local counts, learns every node's totals of the current window, forgets finished windows. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.exchangeCounts()).catch((err) => this.log.warn({ err }, 'rate budget sync failed'));
    return this.syncing;
  }

  private async exchangeCounts(): Promise<void> {
    const current = Math.floor(this.clock.now().getTime() / WINDOW_MS);
    const batch = this.takePending(current);
    for (let i = 0; i < batch.length; i += PUSH_CHUNK) await this.pushCounts(batch.slice(i, i + PUSH_CHUNK));
    // Counts other nodes charged to subjects this node has not served yet in this window.
    const rows = await this.db.query<{ key: string; count: number }>(
      'SELECT key, count FROM rate_counters WHERE window_start = $1', [new Date(current * WINDOW_MS)]);
    for (const row of rows) {
      const first = row.key.indexOf(':');
      const last = row.key.lastIndexOf(':');
      const kind = row.key.slice(0, first);
      if (kind !== 'account' && kind !== 'user') continue;
      const c = this.counter(kind, row.key.slice(first + 1, last), row.key.slice(last + 1), current);
      c.synced = Math.max(c.synced, row.count);
    }
    if (++this.syncs % 60 === 0) {
      await this.db.query('DELETE FROM rate_counters WHERE window_start < $1', [new Date((current - 2) * WINDOW_MS)]);
    }
  }

  /** The counters with unshared counts, as store keys; drops the counters of finished windows. */
  private takePending(current: number): [string, Counter, number][] {
    const batch: [string, Counter, number][] = [];
    for (const kind of ['account', 'user'] as const) {
      for (const [id, byCategory] of this.counters[kind]) {
        for (const [category, c] of byCategory) {
          if (c.pending > 0) batch.push([`${kind}:${id}:${category}`, c, c.pending]);
          if (c.window < current) byCategory.delete(category);
        }
        if (!byCategory.size) this.counters[kind].delete(id);
      }
    }
    return batch;
  }

  private async pushCounts(batch: [string, Counter, number][]): Promise<void> {
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
  }
}
