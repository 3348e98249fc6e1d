// Cadence advice (monitoring-api.md, "Heartbeat ping endpoint" rule 6), pure: the real cadence is
// the median gap between successes of the last 14 days; advice needs five successes and is given
// only when the declared window does not fit it.

export const CADENCE_WINDOW_MS = 14 * 86_400_000;
export const ADVICE_MIN_SUCCESSES = 5;
/** `too_loose` when period + grace is at least this many times the real cadence. */
export const TOO_LOOSE_FACTOR = 4;
const MINUTE_MS = 60_000;
const PERIOD_MAX_MS = 30 * 86_400_000;

export interface CadenceAdvice { kind: 'too_tight' | 'too_loose'; suggested_period_secs: number }

export interface Cadence {
  /** null until two successes give a gap. */
  observedPeriodMs: number | null;
  advice: CadenceAdvice | null;
}

function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * `successes` are epoch ms in ascending order. The suggestion is the real cadence rounded to the
 * nearest minute (cron jitter of seconds does not move it), within the period's bounds (60 s to 30 d);
 * a `too_tight` one is rounded up instead when the nearest minute plus the grace would still be
 * shorter than the cadence, so that following the advice ends it.
 */
export function cadenceOf(successes: readonly number[], timing: { period: number; grace: number }): Cadence {
  if (successes.length < 2) return { observedPeriodMs: null, advice: null };
  const gaps = successes.slice(1).map((at, i) => at - successes[i]!).sort((a, b) => a - b);
  const observed = median(gaps);
  if (successes.length < ADVICE_MIN_SUCCESSES) return { observedPeriodMs: observed, advice: null };
  const window = timing.period + timing.grace;
  const kind = observed > window ? 'too_tight' : window >= TOO_LOOSE_FACTOR * observed ? 'too_loose' : null;
  if (!kind) return { observedPeriodMs: observed, advice: null };
  const nearest = Math.round(observed / MINUTE_MS) * MINUTE_MS;
  const fitting = kind === 'too_tight' && nearest + timing.grace < observed ? Math.ceil(observed / MINUTE_MS) * MINUTE_MS : nearest;
  const suggested = Math.min(PERIOD_MAX_MS, Math.max(MINUTE_MS, fitting));
  return { observedPeriodMs: observed, advice: { kind, suggested_period_secs: suggested / 1000 } };
}
