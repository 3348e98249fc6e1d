// Reading results: one monitor's, inside the window the plan keeps readable (`retention_days`).
import type { Executor } from '../db/db.js';
import type { EffectivePlan } from '../plans/service.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { instantOf } from '../shared/instant.js';
import { getTargetRowInOrg } from '../targets/service.js';
import type { CheckResultT, ListResults } from './schema.js';
import { DAY_MS } from './rollup-store.js';
import { listResultRows, type ResultWindow, type StoredResult } from './store.js';

export interface ResultsCtx { db: Executor; clock: Clock; orgId: string; plan: EffectivePlan }


/** The kind's fields first, so a field can never shadow a common one. */
export function toCheckResult(row: StoredResult): CheckResultT {
  return {
    ...row.fields,
    id: row.id, target_id: row.target_id, region: row.region, checked_at: row.checked_at.toISOString(),
    status: row.status, duration_ms: row.duration_ms, error: row.error,
    ...(row.timings && { timings: row.timings }),
  };
}

/** The oldest instant the plan keeps readable (`retention_days`); 0 when it keeps everything. */
export function oldestReadable(clock: Clock, plan: EffectivePlan): number {
  const retention = plan.caps.retention_days;
  return retention === null ? 0 : clock.now().getTime() - retention * DAY_MS;
}

/**
 * The one readable-window rule of history reads (results, uptime, latency, incident periods):
 * `from`/`to` as asked, both raised to the oldest instant `retention_days` keeps readable (a window
 * wholly older than that is empty, at that instant); `from` after `to` as asked is 400. Without
 * `from` the window starts `defaultSpanMs` before `to`, or at the oldest readable instant; with
 * `endAtNow`, `to` is never later than now (and `from` never later than `to`).
 */
export function resultWindow(clock: Clock, plan: EffectivePlan, query: { from?: string; to?: string; region?: string },
  options: { defaultSpanMs?: number; endAtNow?: boolean } = {}): ResultWindow {
  const now = clock.now().getTime();
  const oldest = oldestReadable(clock, plan);
  const asked = query.to ? instantOf(query.to, 'to').getTime() : now;
  const to = Math.max(options.endAtNow ? Math.min(asked, now) : asked, oldest);
  let fromAsked: number;
  if (query.from) {
    fromAsked = instantOf(query.from, 'from').getTime();
    if (fromAsked > asked) throw new AppError(400, 'VALIDATION_FAILED', 'from: must not be after to', { field: 'from' });
  } else {
    // A default never contradicts the `to` given, however old: that window is merely empty.
    fromAsked = options.defaultSpanMs === undefined ? oldest : to - options.defaultSpanMs;
  }
  const from = Math.min(Math.max(fromAsked, oldest), to);
  return { from: new Date(from), to: new Date(to), ...(query.region !== undefined && { region: query.region }) };
}

export async function listResults(ctx: ResultsCtx, targetId: string, query: ListResults) {
  await getTargetRowInOrg(ctx.db, ctx.orgId, targetId);
  const { limit = 50, offset = 0 } = query;
  const { rows, total } = await listResultRows(ctx.db, targetId, resultWindow(ctx.clock, ctx.plan, query), { limit, offset });
  return { results: rows.map(toCheckResult), total, limit, offset };
}
