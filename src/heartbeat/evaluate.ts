// The scheduler's evaluation of heartbeat monitors (monitoring-api.md, "Heartbeat monitor"): an `up`
// heartbeat whose deadline (`due_at`: silence past period + grace, or a run past max_runtime) has
// passed goes down through the normal incident pipeline. It reads the due index, not every monitor,
// so it runs every few seconds on every node, well inside the interval rule's 60 to 300 s; rows
// another node or a ping batch holds are skipped and judged on the next pass. A due time can be
// early (routine pings leave it alone): such a row is set to its real deadline and left up, with the
// routine successes logged since it was written folded in (store.ts, `saveRoutine`).
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { closeWaitedRecoveries } from '../incidents/index.js';
import type { CheckResultRecord, ResultWriter } from '../results/index.js';
import type { Clock } from '../shared/context.js';
import { changeOf, COUNTING_SQL, LOGGED_SUCCESS_SQL, resultOf, saveStates, storedDueAt, timingOf, withLoggedSuccess, type HeartbeatRow, type StateChange } from './store.js';
import { dueAt, evaluate } from './verdict.js';

const BATCH = 500;
export const EVALUATE_EVERY_MS = 5_000;

export interface EvaluateDeps { db: Db; results: ResultWriter; clock: Clock; log: Logger }

/**
 * Judges every heartbeat due at the clock's now, and closes heartbeat incidents whose recovery wait
 * (`recovery_period_secs`) has run out: no result comes to close them while a heartbeat stays up.
 * Returns the number that went down.
 */
export async function evaluateHeartbeats(deps: EvaluateDeps, { batch = BATCH } = {}): Promise<number> {
  const now = deps.clock.now();
  await closeWaitedRecoveries(deps.db, now);
  let total = 0;
  for (;;) {
    const pass = await deps.db.transaction(async (tx) => {
      const rows = await tx.query<HeartbeatRow & { check_spec: Record<string, unknown>; counting: boolean; logged_success: Date | null }>(
        `SELECT h.*, t.check_spec, ${COUNTING_SQL} AS counting, ${LOGGED_SUCCESS_SQL} AS logged_success
           FROM heartbeats h JOIN targets t ON t.id = h.target_id JOIN orgs o ON o.id = t.org_id
          WHERE h.status = 'up' AND h.due_at < $1 ORDER BY h.due_at LIMIT $2 FOR UPDATE OF h SKIP LOCKED`, [now, batch]);
      const changes: StateChange[] = [];
      const results: CheckResultRecord[] = [];
      for (const row of rows.map(withLoggedSuccess)) {
        const timing = timingOf(row.check_spec);
        const change = changeOf(row);
        const judged = row.counting ? evaluate(change.state, timing, now.getTime()) : null;
        if (judged) {
          change.state = judged.state;
          results.push(resultOf(row, judged.result));
        }
        // Judged, early (a success since moved the deadline on) or not running: due at its real deadline
        // (or sooner, for the fold: FOLD_WITHIN_MS), or never.
        change.dueAt = row.counting ? storedDueAt(dueAt(change.state, timing), now.getTime()) : null;
        changes.push(change);
      }
      await saveStates(tx, changes);
      await deps.results.writeNow(tx, ...results);
      return { judged: results.length, full: rows.length === batch };
    });
    total += pass.judged;
    if (!pass.full) return total;
  }
}

export function startHeartbeatEvaluation(deps: EvaluateDeps, everyMs = EVALUATE_EVERY_MS): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    running ??= evaluateHeartbeats(deps)
      .catch((err: unknown) => deps.log.warn({ err }, 'heartbeat evaluation failed'))
      .finally(() => { running = null; });
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
