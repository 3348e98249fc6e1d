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
}

export interface ResultSink {
  /** Queues one result; never blocks the probe loop. */
  push(result: CheckResultRecord): void;
}

/** The region of results no probe produced: heartbeat pings and hand-set manual states. */
export const NO_PROBE_REGION = 'none';

export type { PhaseTimings };
