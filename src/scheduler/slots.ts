// When a monitor runs (issue 4, "Scheduler"): at its effective interval, on slots fixed by its id.
// A slot is `k * interval + phase` with the phase drawn from the id, so start times spread evenly
// (no herd at :00) and every node computes the same slots: a shard that changes hands mid-interval
// is neither run twice nor skipped twice. A monitor whose tick the per-host throttle drops moves
// its own phase (`movedPhaseMs`).
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

/** 1 - 1/φ: a phase moved by this fraction again and again never lands near where it has been. */
const DROPPED_SLOT_SHIFT = 0.382;

/**
 * The phase a monitor moves to when the per-host throttle drops its tick. Slots are fixed, so
 * without a move a monitor whose slot falls beside busy ones on its host would be dropped on every
 * slot, never checked. Moved in memory only: a node that takes its shard over starts again from
 * `phaseMs`, so a handover after a drop may run or skip one extra slot.
 */
export function movedPhaseMs(phase: number, intervalMs: number): number {
  return (phase + Math.round(intervalMs * DROPPED_SLOT_SHIFT)) % intervalMs;
}

/** The first slot at or after `atMs`. */
export function nextSlotMs(atMs: number, intervalMs: number, phase: number): number {
  const k = Math.ceil((atMs - phase) / intervalMs);
  return k * intervalMs + phase;
}

/** About how many checks one wake-up of the scheduler's timer starts (`dispatchQuantumMs`). */
export const CHECKS_PER_WAKE = 5;
/** The most a check starts late for sharing a wake-up. */
export const MAX_DISPATCH_QUANTUM_MS = 50;

/**
 * The scheduler's timer wakes on multiples of this and starts every check due by then, so checks
 * due close together share a wake-up: on this VM waking an idle process costs more than a check's
 * own work (bench:checks, PGlite, 100 checks/s: 0.878 ms of CPU a check waking for each, 0.505
 * waking every 50 ms). Sized to about `CHECKS_PER_WAKE` checks at the node's rate, not more: checks
 * started together wait for each other's JavaScript, which their timings would count (50 at once
 * put 6 ms on a loopback check's median duration).
 */
export function dispatchQuantumMs(checksPerSec: number): number {
  if (!(checksPerSec > 0)) return MAX_DISPATCH_QUANTUM_MS;
  return Math.min(MAX_DISPATCH_QUANTUM_MS, Math.max(1, Math.round((CHECKS_PER_WAKE * 1000) / checksPerSec)));
}
