// The heartbeat rule (monitoring-api.md, "Heartbeat monitor" transitions, "Heartbeat ping endpoint"),
// pure: the ingest and the evaluation sweep load a heartbeat's state under its row lock, run it
// through these functions and store what comes back. A result is returned only when the verdict
// changes: a routine ping writes none.

export type HeartbeatStatus = 'pending' | 'up' | 'down';
export type PingSignal = 'success' | 'start' | 'fail';

export interface HeartbeatTiming {
  /** ms */
  period: number;
  grace: number;
  max_runtime?: number | null;
}

/** Times are epoch ms. */
export interface HeartbeatState {
  status: HeartbeatStatus;
  firstPingAt: number | null;
  lastPingAt: number | null;
  lastSuccessAt: number | null;
  lastStartAt: number | null;
  /** Set while a `/start`ed run has not finished. */
  runStartedAt: number | null;
  lastFailAt: number | null;
  lastExitCode: number | null;
  /** Where the silence clock counts from: the last success, the first ping, or a resume. */
  windowFrom: number | null;
}

export interface Ping { signal: PingSignal; exitCode: number | null; at: number }

/** The check result a verdict change writes. */
export interface Judgement { status: 'up' | 'down'; error: string | null; at: number }

export const PENDING: HeartbeatState = Object.freeze({
  status: 'pending', firstPingAt: null, lastPingAt: null, lastSuccessAt: null, lastStartAt: null,
  runStartedAt: null, lastFailAt: null, lastExitCode: null, windowFrom: null,
});

/** `/{code}`: 0 is a success, any other code a failure carrying it. */
export function signalOfExitCode(code: number): PingSignal {
  return code === 0 ? 'success' : 'fail';
}

const changed = (from: HeartbeatStatus, status: 'up' | 'down', error: string | null, at: number): Judgement | null =>
  from === status ? null : { status, error, at };

/**
 * One counted ping. A success clears a failure and restarts the silence clock; a failure is down at
 * once (a first ping included); a start opens a run and restarts nothing, but a first ping of any
 * signal ends `pending`. `runMs` is the finished run's duration when a start preceded the finish.
 */
export function applyPing(state: HeartbeatState, ping: Ping): { state: HeartbeatState; result: Judgement | null; runMs: number | null } {
  const { at } = ping;
  const seen = { ...state, firstPingAt: state.firstPingAt ?? at, lastPingAt: at };
  if (ping.signal === 'start') {
    const first = state.status === 'pending';
    return {
      state: { ...seen, lastStartAt: at, runStartedAt: at, ...(first && { status: 'up' as const, windowFrom: at }) },
      result: first ? { status: 'up', error: null, at } : null,
      runMs: null,
    };
  }
  const runMs = state.runStartedAt === null ? null : Math.max(0, at - state.runStartedAt);
  const exit = ping.exitCode === null ? {} : { lastExitCode: ping.exitCode };
  if (ping.signal === 'success') {
    return {
      state: { ...seen, ...exit, status: 'up', lastSuccessAt: at, windowFrom: at, runStartedAt: null },
      result: changed(state.status, 'up', null, at),
      runMs,
    };
  }
  const reason = ping.exitCode === null ? 'the job reported a failure' : `the job exited with code ${ping.exitCode}`;
  return {
    state: { ...seen, ...exit, status: 'down', lastFailAt: at, runStartedAt: null },
    result: changed(state.status, 'down', reason, at),
    runMs,
  };
}

/** When an `up` heartbeat must next be judged: silence past period + grace, or an open run past max_runtime. */
export function dueAt(state: HeartbeatState, timing: HeartbeatTiming): number | null {
  if (state.status !== 'up' || state.windowFrom === null) return null;
  const silence = state.windowFrom + timing.period + timing.grace;
  const run = state.runStartedAt !== null && timing.max_runtime ? state.runStartedAt + timing.max_runtime : Infinity;
  return Math.min(silence, run);
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The scheduler's evaluation at `now`: an `up` heartbeat whose last success is older than period +
 * grace, or whose `/start`ed run has outlived max_runtime, goes down, dated to the deadline it
 * missed. Pending and down heartbeats are not evaluated.
 */
export function evaluate(state: HeartbeatState, timing: HeartbeatTiming, now: number): { state: HeartbeatState; result: Judgement } | null {
  if (state.status !== 'up' || state.windowFrom === null) return null;
  const silenceDeadline = state.windowFrom + timing.period + timing.grace;
  const runDeadline = state.runStartedAt !== null && timing.max_runtime ? state.runStartedAt + timing.max_runtime : Infinity;
  if (now <= Math.min(silenceDeadline, runDeadline)) return null;
  const error = runDeadline < silenceDeadline
    ? `the run started at ${iso(state.runStartedAt!)} did not finish within max_runtime`
    : `no success ping since ${iso(state.windowFrom)}: period + grace ran out`;
  return { state: { ...state, status: 'down' }, result: { status: 'down', error, at: Math.min(silenceDeadline, runDeadline) } };
}

/**
 * A paused or held heartbeat running again: one that was pinged before is up with a full period +
 * grace from `now` (a run left open across the pause is forgotten); a never-pinged one stays pending.
 */
export function resume(state: HeartbeatState, now: number): { state: HeartbeatState; result: Judgement | null } {
  if (state.status === 'pending') return { state, result: null };
  return { state: { ...state, status: 'up', windowFrom: now, runStartedAt: null }, result: changed(state.status, 'up', null, now) };
}
