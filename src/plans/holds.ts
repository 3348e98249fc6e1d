// Holds (service-api.md, "Holds"): when a plan shrinks below what an account uses, the newest rows
// are held. Each domain with a capped pool (monitors, status pages) registers its reconciler;
// plan moves, overrides, deletions, startup and a daily sweep call `reconcileHolds`.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import type { ResultWriter } from '../results/index.js';
import type { Clock } from '../shared/context.js';
import type { EffectivePlan, PlanService } from './service.js';

export interface HoldCounts { held: number; released: number }
/** What a reconciler may need besides the transaction: a held or released monitor may write a result. */
export interface HoldDeps { results: ResultWriter; clock: Clock }
export type HoldReconciler = (tx: Executor, accountId: string, plan: EffectivePlan, deps: HoldDeps) => Promise<HoldCounts>;

const reconcilers = new Map<string, HoldReconciler>();

export function registerHoldReconciler(pool: string, reconciler: HoldReconciler): void {
  reconcilers.set(pool, reconciler);
}

export async function reconcileHolds(tx: Executor, accountId: string, plan: EffectivePlan, deps: HoldDeps): Promise<HoldCounts> {
  const total = { held: 0, released: 0 };
  for (const reconciler of reconcilers.values()) {
    const counts = await reconciler(tx, accountId, plan, deps);
    total.held += counts.held;
    total.released += counts.released;
  }
  return total;
}

export interface HoldSweepDeps extends HoldDeps { db: Db; plans: PlanService; log: Logger }

/**
 * Reconciles every account, each in a transaction of its own (service-api.md, Events 7: at startup
 * and once a day); this also applies an override whose `expires_at` has passed.
 */
export async function reconcileAllHolds(deps: HoldSweepDeps): Promise<HoldCounts> {
  const total = { held: 0, released: 0 };
  for (const { id } of await deps.db.query<{ id: string }>('SELECT id FROM accounts ORDER BY id')) {
    const counts = await deps.db.transaction(async (tx) => reconcileHolds(tx, id, await deps.plans.load(tx, id), deps));
    total.held += counts.held;
    total.released += counts.released;
  }
  return total;
}

/** Runs `reconcileAllHolds` shortly after start, then daily. */
export function startHoldSweep(deps: HoldSweepDeps, { firstAfterMs = 10_000, everyMs = 86_400_000 } = {}): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const run = (): void => {
    running ??= reconcileAllHolds(deps)
      .then((counts) => { if (counts.held || counts.released) deps.log.info({ holds: counts }, 'holds reconciled'); })
      .catch((err: unknown) => deps.log.error({ err }, 'reconciling holds failed; the next sweep retries'))
      .finally(() => { running = null; });
  };
  const first = setTimeout(run, firstAfterMs);
  const every = setInterval(run, everyMs);
  first.unref();
  every.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
