// When a monitor runs (issue 4, "Scheduler"): at its effective interval, on slots fixed by its id.
// A slot is `k * interval + phase` with the phase drawn from the id, so start times spread evenly
// (no herd at :00) and every node computes the same slots: a shard that changes hands mid-interval
// is neither run twice nor skipped twice.
import { createHash } from 'node:crypto';
import { MANUAL_INTERVAL_SECS, type CheckKind } from '../targets/constants.js';
import { effectiveFloor } from '../targets/intervals.js';

export const SHARD_COUNT = 64;

/** The shard of a monitor: the last 16 bits of its UUIDv7 id (random bits), as SQL computes it too. */
export const shardOf = (targetId: string): number => Number.parseInt(targetId.slice(-4), 16) % SHARD_COUNT;

/** The same rule in SQL, over a uuid column. */
export const SHARD_SQL = (column: string): string => `(('x' || right(${column}::text, 4))::bit(16)::int % ${SHARD_COUNT})`;

/**
 * max(stored, plan floor, kind floor), in seconds; the stored value is never rewritten. A manual
 * state is restated exactly once a minute whatever the plan (Manual monitor rules 4).
 */
export function effectiveIntervalSecs(kind: CheckKind, storedSecs: number, planFloorSecs: number | null): number {
  if (kind === 'manual') return MANUAL_INTERVAL_SECS;
  return Math.max(storedSecs, effectiveFloor(kind, planFloorSecs));
}

/** A stable offset in [0, interval) for one (monitor, region). */
export function phaseMs(targetId: string, region: string, intervalMs: number): number {
  const digest = createHash('sha256').update(targetId).update('\0').update(region).digest();
  return digest.readUInt32BE(0) % intervalMs;
}

/** The first slot at or after `atMs`. */
export function nextSlotMs(atMs: number, intervalMs: number, phase: number): number {
  const k = Math.ceil((atMs - phase) / intervalMs);
  return k * intervalMs + phase;
}
