// The incident rule of a probed monitor (monitoring-api.md, "Alert config", "Incident"), pure: the
// store-facing engine feeds it each result in time order and persists what it returns.
//
// A region's checks form streaks: `down` extends a failing streak, `up` and `degraded` (the target
// answered) a passing one, `error` (the check itself could not decide) neither, so it neither
// confirms an outage nor a recovery. An incident opens when `alert_confirmations` consecutive
// failures are seen in as many regions as `region_policy` asks (clamped to the monitor's regions);
// it starts recovering when too few regions could still be failing, and closes once the recovery
// has lasted `recovery_period_secs`, dated to when that recovery began. A failure confirmed while
// recovering keeps the incident, records the stretch in `recovered` and waits for a new recovery.
import type { ResultStatus } from '../probes/types.js';
import type { RegionPolicyT } from '../targets/schema.js';

export interface AlertRule {
  confirmations: number;
  policy: RegionPolicyT;
  recoveryPeriodMs: number;
  /** The regions the monitor runs in (at least 1). */
  regionCount: number;
  /** Manual monitors: a state set `degraded` by hand fails too. */
  degradedFails?: boolean;
}

export interface RegionStreak {
  failing: number;
  /** When the current failing streak began. */
  failingSince: number | null;
  passing: number;
  /** When the current passing streak began. */
  passingSince: number | null;
}

export interface OpenIncident {
  startedAt: number;
  recoveringSince: number | null;
  recovered: { from: number; until: number }[];
}

export interface MonitorState {
  regions: Record<string, RegionStreak>;
  incident: OpenIncident | null;
}

export type Transition =
  | { kind: 'open'; startedAt: number; regionsDown: number }
  | { kind: 'recovering'; since: number }
  | { kind: 'relapsed'; stretch: { from: number; until: number } }
  | { kind: 'closed'; endedAt: number };

/** Regions that must agree before an incident opens: `{count: N}` is clamped to the monitor's. */
export function regionsNeeded(policy: RegionPolicyT, regionCount: number): number {
  const n = Math.max(1, regionCount);
  if (policy === 'any') return 1;
  if (policy === 'all') return n;
  if (policy === 'majority') return Math.floor(n / 2) + 1;
  return Math.min(n, Math.max(1, policy.count));
}

const noStreak = (): RegionStreak => ({ failing: 0, failingSince: null, passing: 0, passingSince: null });

/**
 * A streak counts up to `cap` (the confirmations) and no further: beyond it nothing changes, so a
 * monitor that stays up rewrites nothing.
 */
function nextStreak(streak: RegionStreak, status: ResultStatus, at: number, rule: AlertRule): RegionStreak {
  const cap = rule.confirmations;
  if (status === 'down' || (rule.degradedFails && status === 'degraded')) {
    if (streak.failing >= cap) return streak;
    return { failing: streak.failing + 1, failingSince: streak.failingSince ?? at, passing: 0, passingSince: null };
  }
  if (status === 'up' || status === 'degraded') {
    if (streak.passing >= cap) return streak;
    return { failing: 0, failingSince: null, passing: streak.passing + 1, passingSince: streak.passingSince ?? at };
  }
  return streak;
}

/**
 * `state` after one result of `region` at `at`, and what that did to the incident. `state` is not
 * changed; the caller stores the returned one.
 */
export function applyResult(state: MonitorState, rule: AlertRule, region: string, status: ResultStatus, at: number): { state: MonitorState; transitions: Transition[] } {
  const regions = { ...state.regions, [region]: nextStreak(state.regions[region] ?? noStreak(), status, at, rule) };
  const streaks = Object.values(regions);
  const needed = regionsNeeded(rule.policy, rule.regionCount);
  const confirmedDown = streaks.filter((s) => s.failing >= rule.confirmations);
  const confirmedUp = streaks.filter((s) => s.passing >= rule.confirmations);
  const isDown = confirmedDown.length >= needed;
  // Recovered when fewer regions than the policy needs could still be failing.
  const isUp = Math.max(1, rule.regionCount) - confirmedUp.length < needed;
  const transitions: Transition[] = [];
  let incident = state.incident;

  if (!incident) {
    if (isDown) {
      const startedAt = Math.min(...confirmedDown.map((s) => s.failingSince!));
      incident = { startedAt, recoveringSince: null, recovered: [] };
      transitions.push({ kind: 'open', startedAt, regionsDown: confirmedDown.length });
    }
  } else if (incident.recoveringSince === null) {
    if (isUp) {
      const since = Math.max(...confirmedUp.map((s) => s.passingSince!));
      incident = { ...incident, recoveringSince: since };
      transitions.push({ kind: 'recovering', since });
    }
  } else if (isDown) {
    const until = Math.min(...confirmedDown.map((s) => s.failingSince!));
    const stretch = { from: incident.recoveringSince, until: Math.max(until, incident.recoveringSince) };
    incident = { ...incident, recoveringSince: null, recovered: [...incident.recovered, stretch] };
    transitions.push({ kind: 'relapsed', stretch });
  }

  if (incident?.recoveringSince != null && regions[region]!.failing === 0 && at - incident.recoveringSince >= rule.recoveryPeriodMs && isUp) {
    transitions.push({ kind: 'closed', endedAt: incident.recoveringSince });
    incident = null;
  }
  return { state: { regions, incident }, transitions };
}
