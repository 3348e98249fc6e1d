// The per-org rollup, and its server-side cache (Conventions 10: 5 s, keyed by org).
import type { Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import { CHECK_KINDS, type CheckKind } from '../targets/constants.js';
import type { DashboardSummaryT } from './schema.js';

export const DASHBOARD_CACHE_MS = 5_000;

/** One statement over the org's targets, grouped by kind; the totals are their sums. */
export async function computeSummary(db: Executor, orgId: string): Promise<DashboardSummaryT> {
  const rows = await db.query<{ kind: CheckKind; total: number; enabled: number; held: number }>(
    `SELECT kind, count(*)::int AS total, count(*) FILTER (WHERE enabled)::int AS enabled,
            count(*) FILTER (WHERE held_at IS NOT NULL)::int AS held
       FROM targets WHERE org_id = $1 GROUP BY kind`, [orgId]);
  const byKind = Object.fromEntries(CHECK_KINDS.map((k) => [k, 0])) as Record<CheckKind, number>;
  let total = 0, enabled = 0, held = 0;
  for (const row of rows) {
    byKind[row.kind] = row.total;
    total += row.total;
    enabled += row.enabled;
    held += row.held;
  }
  return { total, enabled, paused: total - enabled, held, by_kind: byKind };
}

/** Entries beyond this make a set sweep the expired ones, so departed orgs do not pile up. */
const SWEEP_AT = 10_000;

/** Summaries per org id, each served for `ttlMs` from when it was computed, by the injected clock. */
export class SummaryCache {
  private readonly entries = new Map<string, { expiresAt: number; value: DashboardSummaryT }>();

  constructor(private readonly clock: Clock, private readonly ttlMs = DASHBOARD_CACHE_MS) {}

  async get(orgId: string, compute: () => Promise<DashboardSummaryT>): Promise<DashboardSummaryT> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(orgId);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = await compute();
    if (this.entries.size >= SWEEP_AT) {
      for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    }
    this.entries.set(orgId, { expiresAt: now + this.ttlMs, value });
    return value;
  }
}
