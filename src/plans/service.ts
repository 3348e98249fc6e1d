// Effective plans: the plan row, an unexpired override on top, clamps applied. Cached per account
// for `plan_cache_ttl_secs`, so a change shows on every node within that time (at once on this node).
import type { Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import {
  FEATURE_FLAGS, FLOW_STEPS_CEILING, PLAN_NUMERIC_COLUMNS, SEED_PLANS,
  type PlanCaps, type PlanFlags, type PlanNumericColumn,
} from './catalog.js';

export interface EffectivePlan {
  planId: string;
  planName: string;
  caps: PlanCaps;
  flags: PlanFlags;
  /** Columns an unexpired override sets. */
  overridden: PlanNumericColumn[];
  overrideExpiresAt: Date | null;
}

const CACHE_MAX_ENTRIES = 10_000;

type PlanRow = Record<string, unknown> & { id: string; name: string };

export class PlanService {
  private readonly cache = new Map<string, { plan: EffectivePlan; until: number }>();

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    /** A self-hosted install has every feature whatever its plan row says. */
    private readonly selfHosted: boolean,
  ) {}

  async forAccount(accountId: string): Promise<EffectivePlan> {
    const now = this.clock.now().getTime();
    const hit = this.cache.get(accountId);
    if (hit && hit.until > now && (!hit.plan.overrideExpiresAt || hit.plan.overrideExpiresAt.getTime() > now)) return hit.plan;
    const plan = await this.load(this.db, accountId);
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(accountId, { plan, until: now + this.ttlMs });
    return plan;
  }

  /** Reads without the cache, on the caller's executor (inside a quota transaction). */
  async load(db: Executor, accountId: string): Promise<EffectivePlan> {
    const [row] = await db.query<PlanRow & { override_caps: Record<string, number> | null; override_expires_at: Date | null }>(
      `SELECT p.*, o.caps AS override_caps, o.expires_at AS override_expires_at
         FROM accounts a JOIN plans p ON p.id = a.plan_id
         LEFT JOIN plan_overrides o ON o.account_id = a.id AND (o.expires_at IS NULL OR o.expires_at > $2)
        WHERE a.id = $1`, [accountId, this.clock.now()]);
    if (!row) throw new Error(`account ${accountId} has no plan`);
    return effectivePlan(row, row.override_caps ?? {}, row.override_expires_at, this.selfHosted);
  }

  invalidate(accountId: string): void {
    this.cache.delete(accountId);
  }
}

export function effectivePlan(row: PlanRow, override: Record<string, number>, overrideExpiresAt: Date | null, selfHosted: boolean): EffectivePlan {
  const caps = {} as PlanCaps;
  for (const column of PLAN_NUMERIC_COLUMNS) {
    caps[column] = column in override ? override[column]! : (row[column] as number | null);
  }
  caps.max_flow_steps = Math.min(caps.max_flow_steps ?? FLOW_STEPS_CEILING, FLOW_STEPS_CEILING);
  if (caps.evidence_days !== null && caps.raw_days !== null) caps.evidence_days = Math.min(caps.evidence_days, caps.raw_days);
  const flags = {} as PlanFlags;
  for (const flag of FEATURE_FLAGS) flags[flag] = selfHosted || Boolean(row[flag]);
  return {
    planId: row.id,
    planName: row.name,
    caps,
    flags,
    overridden: PLAN_NUMERIC_COLUMNS.filter((c) => c in override),
    overrideExpiresAt: Object.keys(override).length ? overrideExpiresAt : null,
  };
}

/** Writes the catalog rows: the spec's values, then `plans.<id>.<column>` from configuration. Runs at every boot. */
export async function seedPlans(db: Executor, configured: Record<string, number>): Promise<void> {
  for (const plan of SEED_PLANS) {
    const caps: Record<string, number | null> = { ...plan.caps };
    for (const column of PLAN_NUMERIC_COLUMNS) {
      const value = configured[`plans.${plan.id}.${column}`];
      if (value !== undefined) caps[column] = value;
    }
    const columns = [...PLAN_NUMERIC_COLUMNS, ...FEATURE_FLAGS];
    const values = [...PLAN_NUMERIC_COLUMNS.map((c) => caps[c]), ...FEATURE_FLAGS.map((f) => plan.flags[f])];
    await db.query(
      `INSERT INTO plans (id, name, ${columns.join(', ')}) VALUES ($1, $2, ${columns.map((_, i) => `$${i + 3}`).join(', ')})
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, ${columns.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()`,
      [plan.id, plan.name, ...values]);
  }
}
