// Intervals (monitoring-api.md, "Limits"; service-api.md, Limits 3-4): kind floors, the plan floor,
// defaults per kind, manual's fixed 60 s and the heartbeat cadence.
import { AppError } from '../shared/errors.js';
import type { CheckSpecT } from './check-specs.js';
import {
  DOMAIN_EXPIRY_DEFAULT_INTERVAL_SECS, HEARTBEAT_INTERVAL_MAX_SECS, HEARTBEAT_INTERVAL_MIN_SECS, KIND_INTERVAL_FLOOR_SECS,
  MANUAL_INTERVAL_SECS, TLS_CERT_DEFAULT_INTERVAL_SECS, type CheckKind,
} from './constants.js';

/** max(plan floor, kind floor); a plan without a floor leaves the kind's. */
export function effectiveFloor(kind: CheckKind, planFloor: number | null): number {
  return Math.max(planFloor ?? 0, KIND_INTERVAL_FLOOR_SECS[kind]);
}

/**
 * Heartbeat evaluation cadence in seconds (`period` and `grace` are ms): one tenth of period + grace,
 * held in 60..300 s, or the plan floor if higher. Rounded down: "not coarser than" a tenth.
 */
export function heartbeatCadence(check: { period: number; grace: number }, planFloor: number | null): number {
  const tenth = Math.floor((check.period + check.grace) / 10 / 1000);
  const held = Math.min(HEARTBEAT_INTERVAL_MAX_SECS, Math.max(HEARTBEAT_INTERVAL_MIN_SECS, tenth));
  return Math.max(held, planFloor ?? 0);
}

export function defaultInterval(check: CheckSpecT, planFloor: number | null): number {
  const floor = effectiveFloor(check.type, planFloor);
  switch (check.type) {
    case 'manual': return MANUAL_INTERVAL_SECS;
    case 'heartbeat': return heartbeatCadence(check, planFloor);
    case 'domain_expiry': return Math.max(DOMAIN_EXPIRY_DEFAULT_INTERVAL_SECS, floor);
    case 'tls_cert': return Math.max(TLS_CERT_DEFAULT_INTERVAL_SECS, floor);
    default: return Math.max(60, floor);
  }
}

/**
 * The interval to store. `requested` is the body's interval (checked against the floor), else
 * `fallback` (the stored one on PATCH, unchecked: a raised plan floor never rewrites it), else the
 * default. A heartbeat interval coarser than its cadence is lowered to it.
 */
export function resolveInterval(check: CheckSpecT, planFloor: number | null, requested: number | undefined, fallback?: number): number {
  if (check.type === 'manual') {
    refuseManualInterval(requested);
    return MANUAL_INTERVAL_SECS;
  }
  if (requested !== undefined) {
    const floor = effectiveFloor(check.type, planFloor);
    if (requested < floor) {
      // Below the plan's floor it is a quota refusal (service-api.md, Events 6); below the kind's alone it is not.
      const byPlan = planFloor !== null && requested < planFloor;
      throw new AppError(422, 'MIN_CHECK_INTERVAL', `interval: at least ${floor} s for a ${check.type} monitor on this plan`, {
        field: 'interval',
        ...(byPlan && { rejection: { event: 'quota_exceeded' as const, quota: 'min_check_interval_secs', details: { limit: planFloor, requested, kind: check.type } } }),
      });
    }
  }
  const interval = requested ?? fallback ?? defaultInterval(check, planFloor);
  return check.type === 'heartbeat' ? Math.min(interval, heartbeatCadence(check, planFloor)) : interval;
}

/**
 * A manual monitor runs exactly every 60 s: any other `interval` sent is 400 INVALID_INTERVAL. The
 * routes ask it before the body's schema too, so a fraction or a value past the schema's bound
 * answers this code rather than the schema's.
 */
export function refuseManualInterval(interval: unknown): void {
  if (interval !== undefined && interval !== MANUAL_INTERVAL_SECS) {
    throw new AppError(400, 'INVALID_INTERVAL', `interval: a manual monitor runs exactly every ${MANUAL_INTERVAL_SECS} s`, { field: 'interval' });
  }
}
