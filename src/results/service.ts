// Reading results: one monitor's, inside the window the plan keeps readable (`retention_days`).
import type { Executor } from '../db/db.js';
import type { EffectivePlan } from '../plans/service.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { getTargetRowInOrg } from '../targets/service.js';
import type { CheckResultT, ListResults } from './schema.js';
import { listResultRows, type ResultWindow, type StoredResult } from './store.js';

export interface ResultsCtx { db: Executor; clock: Clock; orgId: string; plan: EffectivePlan }

const DAY_MS = 86_400_000;

/** The kind's fields first, so a field can never shadow a common one. */
export function toCheckResult(row: StoredResult): CheckResultT {
  return {
    ...row.fields,
    id: row.id, target_id: row.target_id, region: row.region, checked_at: row.checked_at.toISOString(),
    status: row.status, duration_ms: row.duration_ms, error: row.error,
    ...(row.timings && { timings: row.timings }),
  };
}

/** `from`/`to` as asked, `from` raised to the oldest readable instant; `from` after `to` is 400. */
export function resultWindow(clock: Clock, plan: EffectivePlan, query: { from?: string; to?: string; region?: string }): ResultWindow {
  const now = clock.now();
  const retention = plan.caps.retention_days;
  const oldest = retention === null ? new Date(0) : new Date(now.getTime() - retention * DAY_MS);
  const from = query.from ? new Date(Math.max(Date.parse(query.from), oldest.getTime())) : oldest;
  const to = query.to ? new Date(query.to) : now;
  if (from > to) throw new AppError(400, 'VALIDATION_FAILED', 'from: must not be after to', { field: 'from' });
  return { from, to, ...(query.region !== undefined && { region: query.region }) };
}

export async function listResults(ctx: ResultsCtx, targetId: string, query: ListResults) {
  await getTargetRowInOrg(ctx.db, ctx.orgId, targetId);
  const { limit = 50, offset = 0 } = query;
  const { rows, total } = await listResultRows(ctx.db, targetId, resultWindow(ctx.clock, ctx.plan, query), { limit, offset });
  return { results: rows.map(toCheckResult), total, limit, offset };
}
