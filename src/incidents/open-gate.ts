// What stands between the rule's `open` (verdict.ts) and an incident: what a person or a
// maintenance window already said about the failure.
import type { Executor } from '../db/db.js';
import type { ResultStatus } from '../probes/types.js';

/** A suppressing maintenance window over the monitor, `[from, until)` in epoch ms. */
export interface Span { from: number; until: number }

export interface Opening {
  targetId: string;
  /** Manual monitors restate their state; other kinds observe afresh with each result. */
  manual: boolean;
  /** When the rule dates the failure (its streak's start). */
  startedAt: number;
  /** The result that confirmed it. */
  at: number;
  status: ResultStatus;
}

/**
 * The start of the incident the rule would open, or null when none opens:
 * - under a suppressing window at the result, none: the streaks go on, and a monitor still failing
 *   when the window ends opens one with its next failure, dated no earlier than the window's end
 *   (the suppressed failures are not part of it);
 * - on a manual monitor whose incident was resolved by hand during this failure, none while the
 *   state is the one resolved over: restating it is no fresh confirmation. A state of another
 *   status opens one from then. (A probed monitor's hand-resolve restarts its streaks instead, so
 *   fresh confirmations reopen it: resolveIncident.)
 */
export async function gateOpen(tx: Executor, spans: readonly Span[], o: Opening): Promise<number | null> {
  if (spans.some((w) => o.at >= w.from && o.at < w.until)) return null;
  let startedAt = o.startedAt;
  if (o.manual) {
    const resolvedOver = await statusResolvedByHand(tx, o.targetId, o.startedAt);
    if (resolvedOver !== undefined) {
      if (resolvedOver === o.status) return null;
      startedAt = o.at;
    }
  }
  const ended = spans.filter((w) => w.until > startedAt && w.until <= o.at).map((w) => w.until);
  return Math.max(startedAt, ...ended);
}

/**
 * The status the monitor had when its latest incident resolved by hand at or after `since` was
 * resolved (its last result then; null when none is left); undefined when there is no such resolve.
 * `resolved_at` is set only by a person (the engine's closes set `ended_at`).
 */
async function statusResolvedByHand(tx: Executor, targetId: string, since: number): Promise<ResultStatus | null | undefined> {
  const [row] = await tx.query<{ status: ResultStatus | null }>(
    `SELECT (SELECT r.status FROM check_results r WHERE r.target_id = i.target_id AND r.checked_at <= i.resolved_at
              ORDER BY r.checked_at DESC, r.id DESC LIMIT 1) AS status
       FROM incidents i WHERE i.target_id = $1 AND i.source = 'monitor' AND i.resolved_at >= $2
      ORDER BY i.resolved_at DESC LIMIT 1`, [targetId, new Date(since)]);
  return row ? row.status : undefined;
}
