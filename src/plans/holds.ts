// Holds (service-api.md, "Holds"): when a plan shrinks below what an account uses, the newest rows
// are held. Each domain with a capped pool (monitors, status pages) registers its reconciler;
// plan moves, overrides (set, cleared, or expired: watched each minute), deletions, startup and a
// daily sweep call `reconcileHolds`.
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
  return reconcileAccounts(deps, await deps.db.query<{ id: string }>('SELECT id FROM accounts ORDER BY id'));
}

/**
 * Reconciles the accounts whose override expired in `(from, to]`: an override passing is an
 * override changing (Events 7), so its monitors are held or released within the minute, not at the
 * next daily sweep.
 */
export async function reconcileExpiredOverrides(deps: HoldSweepDeps, from: Date, to: Date): Promise<HoldCounts> {
  return reconcileAccounts(deps, await deps.db.query<{ id: string }>(
    'SELECT account_id AS id FROM plan_overrides WHERE expires_at > $1 AND expires_at <= $2 ORDER BY account_id', [from, to]));
}

async function reconcileAccounts(deps: HoldSweepDeps, accounts: ReadonlyArray<{ id: string }>): Promise<HoldCounts> {
  const total = { held: 0, released: 0 };
  for (const { id } of accounts) {
    const counts = await deps.db.transaction(async (tx) => reconcileHolds(tx, id, await deps.plans.load(tx, id), deps));
    total.held += counts.held;
    total.released += counts.released;
  }
  return total;
}

/** Runs `reconcileAllHolds` shortly after start, then daily; and, every `expiryEveryMs`, the accounts whose override has just expired. */
export function startHoldSweep(deps: HoldSweepDeps, { firstAfterMs = 10_000, everyMs = 86_400_000, expiryEveryMs = 60_000 } = {}): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const sweep = (what: () => Promise<HoldCounts>) => (): void => {
    running ??= what()
      .then((counts) => { if (counts.held || counts.released) deps.log.info({ holds: counts }, 'holds reconciled'); })
      .catch((err: unknown) => deps.log.error({ err }, 'reconciling holds failed; the next sweep retries'))
      .finally(() => { running = null; });
  };
  // The expiry watch covers from start on: the startup sweep covers what expired before.
  let checkedUpTo = deps.clock.now();
  const expired = sweep(() => {
    const now = deps.clock.now();
    const from = checkedUpTo;
    checkedUpTo = now;
    return reconcileExpiredOverrides(deps, from, now);
  });
  const timers = [setTimeout(sweep(() => reconcileAllHolds(deps)), firstAfterMs), setInterval(sweep(() => reconcileAllHolds(deps)), everyMs), setInterval(expired, expiryEveryMs)];
  for (const timer of timers) timer.unref();
  return {
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await running;
    },
  };
}
