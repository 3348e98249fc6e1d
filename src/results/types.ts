// A check result as the engine records it. The scheduler, check-now and (later) agent ingest push
// these into one `ResultWriter`; the read endpoints answer from what it stored.
import type { PhaseTimings, ProbeResult } from '../probes/types.js';

export interface CheckResultRecord extends ProbeResult {
  /** Minted by the writer when absent; set by a caller that answers with the result (check-now). */
  id?: string;
  targetId: string;
  orgId: string;
  region: string;
  /** When the check started (the scheduled slot's actual start). */
  checkedAt: Date;
  /**
   * How long the status stands for uptime if no newer result comes (src/results/rollup.ts): three
   * intervals for a probe; absent for heartbeat pings and manual states, which stand until changed.
   */
  staleAfterMs?: number;
}

/** A probe's result stands three intervals: a missed tick or a lease moving still counts; a pause does not. */
export function staleAfterMsOf(intervalMs: number): number {
  return 3 * intervalMs;
}

export interface ResultSink {
  /** Queues one result; never blocks the probe loop. */
  push(result: CheckResultRecord): void;
}

/** The region of results no probe produced: heartbeat pings and hand-set manual states. */
export const NO_PROBE_REGION = 'none';

export type { PhaseTimings };
