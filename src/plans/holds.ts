// Holds (service-api.md, "Holds"): when a plan shrinks below what an account uses, the newest rows
// are held. Each domain with a capped pool (monitors, status pages) registers its reconciler;
// plan moves, overrides, deletions, startup and a daily sweep call `reconcileHolds`.
import type { Executor } from '../db/db.js';
import type { EffectivePlan } from './service.js';

export interface HoldCounts { held: number; released: number }
export type HoldReconciler = (tx: Executor, accountId: string, plan: EffectivePlan) => Promise<HoldCounts>;

const reconcilers = new Map<string, HoldReconciler>();

export function registerHoldReconciler(pool: string, reconciler: HoldReconciler): void {
  reconcilers.set(pool, reconciler);
}

export async function reconcileHolds(tx: Executor, accountId: string, plan: EffectivePlan): Promise<HoldCounts> {
  const total = { held: 0, released: 0 };
  for (const reconciler of reconcilers.values()) {
    const counts = await reconciler(tx, accountId, plan);
    total.held += counts.held;
    total.released += counts.released;
  }
  return total;
}
