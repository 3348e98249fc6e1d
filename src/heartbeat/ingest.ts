// Heartbeat ping ingest (monitoring-api.md, "Heartbeat ping endpoint"): group commit. Pings that
// arrive while a commit is in flight wait for the next one and share its transaction; each caller
// is answered after the commit that holds its ping, so an acknowledged ping survives a crash.
//
// The common ping (a routine one, on a heartbeat this node committed last) takes one statement: it
// is judged against the state this node remembers, with the counting and timing of its monitor as
// last read, and saved with its ping log row only where the heartbeat row is still the version this
// node wrote (`saveIfUnchanged`, a compare-and-set: nodes, the sweep and monitor changes, which
// rewrite the row, stay coherent without locks or invalidation). A batch of routine successes
// alone, the steady state of most heartbeats, takes a narrower statement of the same contract
// (`saveRoutine`), which on PGlite writes only the log rows: every statement that reads a heartbeat's
// state folds the routine successes logged since its row was written back in (`LOGGED_SUCCESS_SQL`).
//
// Every other ping (an unknown or previous token, a verdict change, a lost compare-and-set) goes
// through one transaction per batch: find and lock the heartbeats by token hash in one statement,
// judge each ping in arrival order, and save the states, the ping log and any verdict-changing
// results in one statement each. Monitors are not locked: a PATCH holds its monitor with NO KEY
// UPDATE, which the foreign keys of what a result writes (its cursor, streaks) pass.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import type { CheckResultRecord, ResultWriter } from '../results/index.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import {
  changeOf, COUNTING_SQL, HAS_RETIRED_SQL, insertPings, isRoutine, LOGGED_SUCCESS_SQL, pingUrlExists, resultOf, saveIfUnchanged, saveOutputs, saveRoutine,
  saveStates, storedDueAt, TIMING_SQL, withLoggedSuccess, type HeartbeatRow, type JudgedFrom, type PingRow, type StateChange,
} from './store.js';
import { applyPing, dueAt, type HeartbeatTiming, type PingSignal } from './verdict.js';

/** A ping's answer: its id once committed, null for an unknown or revoked token. */
export type PingOutcome = { pingId: string } | null;

interface PingOp { kind: 'ping'; id: string; tokenHash: string; signal: PingSignal; exitCode: number | null; at: number; settle: (outcome: PingOutcome) => void; fail: (err: unknown) => void }
interface OutputOp { kind: 'output'; pingId: string; output: string; settle: () => void; fail: (err: unknown) => void }
type Op = PingOp | OutputOp;

export interface IngestOptions {
  /** Pings per transaction. */
  maxBatch?: number;
  /** Beyond this many waiting, a ping is refused with 503 rather than queued without bound. */
  maxQueued?: number;
  /**
   * Transactions in flight. On PostgreSQL a commit mostly waits for its WAL flush, so several
   * batches overlap; PGlite runs one transaction at a time whatever is asked.
   */
  maxInflight?: number;
}

const LOCKED_COLUMNS = ['target_id', 'org_id', 'token_hash', 'previous_token_hash', 'previous_expires_at', 'status', 'first_ping_at',
  'last_ping_at', 'last_success_at', 'last_start_at', 'run_started_at', 'last_fail_at', 'last_exit_code', 'last_fail_ping_id',
  'window_from', 'due_at', 'previous_last_used_at', 'retired_token_hashes', 'retired_expires_at'] as const;
type LockedRow = Pick<HeartbeatRow, (typeof LOCKED_COLUMNS)[number]> & HeartbeatTiming & { counting: boolean; logged_success: Date | null };
/** What judging a ping reads of its heartbeat besides the state. */
type JudgedRow = Pick<LockedRow, 'target_id' | 'org_id' | 'token_hash' | 'counting'> & HeartbeatTiming;

/**
 * A heartbeat as this node last committed it, by its current token: enough to judge a routine ping.
 * `version` is the row's `xmin` (32 bits, so one remembered for long could meet a wrapped-around
 * twin: an entry is trusted for an hour, far less than 2^32 transactions take); `since` is
 * `performance.now()` at the commit.
 */
interface Known { row: JudgedRow; saved: StateChange; version: string; since: number }

/** Heartbeats remembered; past this the first remembered are forgotten (a few hundred bytes each). */
const KNOWN_MAX = 100_000;
const KNOWN_FOR_MS = 3_600_000;

export class PingIngest {
  private queue: Op[] = [];
  private readonly running = new Set<Promise<void>>();
  private kicked = false;
  private readonly maxBatch: number;
  private readonly maxQueued: number;
  private readonly maxInflight: number;
  private readonly known = new Map<string, Known>();
  /** Pings committed by each path (the routine compare-and-set, the full one, the lock): for the tests. */
  readonly committedBy = { routine: 0, compareAndSet: 0, lock: 0 };

  constructor(private readonly deps: { db: Db; results: ResultWriter; clock: Clock; log: Logger }, options: IngestOptions = {}) {
    this.maxBatch = options.maxBatch ?? 1_000;
    this.maxQueued = options.maxQueued ?? 20_000;
    this.maxInflight = options.maxInflight ?? (deps.db.kind === 'pg' ? 2 : 1);
  }

  /** Resolves once the ping (by its token's hash) is committed, or known to match no ping URL. */
  ping(tokenHash: string, signal: PingSignal, exitCode: number | null): Promise<PingOutcome> {
    return new Promise((settle, fail) => {
      this.enqueue({ kind: 'ping', id: newId(), tokenHash, signal, exitCode, at: this.deps.clock.now().getTime(), settle, fail });
    });
  }

  /** Whether a token (by its hash) names a ping URL now; nothing is written. */
  pingUrlExists(tokenHash: string): Promise<boolean> {
    return pingUrlExists(this.deps.db, tokenHash, this.deps.clock.now());
  }

  /** Attaches a run's output to its committed ping. */
  output(pingId: string, output: string): Promise<void> {
    return new Promise((settle, fail) => this.enqueue({ kind: 'output', pingId, output, settle, fail }));
  }

  /** Resolves when everything queued so far is committed. */
  async flush(): Promise<void> {
    while (this.queue.length || this.running.size) {
      if (this.running.size) await Promise.all(this.running);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private enqueue(op: Op): void {
    if (this.queue.length >= this.maxQueued) {
      op.fail(new AppError(503, 'SERVICE_UNAVAILABLE', 'too many pings waiting for the store; retry shortly', { retryAfter: 1 }));
      return;
    }
    this.queue.push(op);
    this.kick();
  }

  /** Starts a batch on the next turn of the event loop (pings arriving with this one join it), if a slot is free. */
  private kick(): void {
    if (this.kicked || this.running.size >= this.maxInflight || this.queue.length === 0) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      if (this.running.size >= this.maxInflight || this.queue.length === 0) return;
      const run = this.run(this.queue.splice(0, this.maxBatch)).finally(() => {
        this.running.delete(run);
        this.kick();
      });
      this.running.add(run);
      this.kick();
    });
  }

  private async run(batch: Op[]): Promise<void> {
    try {
      const rest = await this.commitKnown(batch);
      if (rest.length === 0) return;
      const { outcomes, committed } = await this.deps.db.transaction((tx) => this.commit(tx, rest));
      const since = performance.now();
      for (const known of committed) this.remember({ ...known, since });
      rest.forEach((op, i) => (op.kind === 'ping' ? op.settle(outcomes[i] ?? null) : op.settle()));
      this.committedBy.lock += outcomes.filter(Boolean).length;
    } catch (err) {
      this.deps.log.error({ err, ops: batch.length }, 'heartbeat ping batch failed');
      // Ops already answered ignore this.
      for (const op of batch) op.fail(err);
    }
  }

  private remember(known: Known): void {
    this.known.set(known.row.token_hash, known);
    if (this.known.size > KNOWN_MAX) this.known.delete(this.known.keys().next().value!);
  }

  /**
   * Judges and saves, in one statement, the pings on heartbeats this node knows, except those whose
   * verdict changes (a result belongs in the locked transaction). Answers the pings it saved; returns
   * the ops left, in arrival order.
   */
  private async commitKnown(batch: readonly Op[]): Promise<Op[]> {
    const trustedSince = performance.now() - KNOWN_FOR_MS;
    const byToken = new Map<string, { known: Known; ops: PingOp[] }>();
    for (const op of batch) {
      if (op.kind !== 'ping') continue;
      const group = byToken.get(op.tokenHash);
      const known = group ? undefined : this.known.get(op.tokenHash);
      if (group) group.ops.push(op);
      else if (known && known.since > trustedSince) byToken.set(op.tokenHash, { known, ops: [op] });
    }
    const groups: Array<{ known: Known; ops: PingOp[]; judged: JudgedFrom }> = [];
    const logged: PingRow[] = [];
    let routine = true;
    for (const { known, ops } of byToken.values()) {
      const { row, saved, version } = known;
      const change: StateChange = { ...saved, state: { ...saved.state } };
      const pings = ops.map((op) => judge(row, change, op));
      if (pings.some((p) => p.result)) continue;
      const judged = { targetId: row.target_id, version, now: change };
      const rows = pings.map((p) => p.logged);
      routine &&= isRoutine(judged, saved, rows);
      groups.push({ known, ops, judged });
      logged.push(...rows);
    }
    if (groups.length === 0) return [...batch];
    const { version, lost } = routine
      ? await saveRoutine(this.deps.db, groups.map((g) => g.judged), logged)
      : await saveIfUnchanged(this.deps.db, groups.map((g) => g.judged), logged);
    const since = performance.now();
    const answered = new Set<Op>();
    for (const { known, ops, judged } of groups) {
      if (lost.has(known.row.target_id)) {
        this.known.delete(known.row.token_hash);
        continue;
      }
      // In place: the common ping allocates no entry. A row saved without a new version (a routine
      // success on PGlite) keeps the time its version was read: it is trusted for an hour from then.
      known.saved = judged.now;
      if (version !== null) {
        known.version = version;
        known.since = since;
      }
      for (const op of ops) {
        op.settle({ pingId: op.id });
        answered.add(op);
      }
    }
    this.committedBy[routine ? 'routine' : 'compareAndSet'] += answered.size;
    return answered.size === 0 ? [...batch] : batch.filter((op) => !answered.has(op));
  }

  /** The outcome of each op of `batch`, by position (outputs have none), and the heartbeats as committed. */
  private async commit(tx: Executor, batch: readonly Op[]): Promise<{ outcomes: PingOutcome[]; committed: Array<Omit<Known, 'since'>> }> {
    const pings = batch.filter((op): op is PingOp => op.kind === 'ping');
    const outcomes: PingOutcome[] = [];
    const rows = pings.length ? await lockHeartbeats(tx, pings, this.deps.clock.now()) : [];
    const byToken = new Map(rows.map((r) => [r.token_hash, r]));
    const byPrevious = new Map(rows.filter((r) => r.previous_token_hash).map((r) => [r.previous_token_hash!, r]));
    const byRetired = new Map(rows.flatMap((r) => r.retired_token_hashes.map((hash, i) => [hash, { row: r, expiresAt: r.retired_expires_at[i]! }] as const)));
    const changes = new Map<string, { row: LockedRow; change: StateChange }>();
    const logged: PingRow[] = [];
    const results: CheckResultRecord[] = [];
    for (const op of batch) {
      if (op.kind === 'output') { outcomes.push(null); continue; }
      const at = new Date(op.at);
      const previous = byPrevious.get(op.tokenHash);
      const viaPrevious = previous && previous.previous_expires_at! > at ? previous : undefined;
      const retired = byRetired.get(op.tokenHash);
      const row = byToken.get(op.tokenHash) ?? viaPrevious ?? (retired && retired.expiresAt > at ? retired.row : undefined);
      if (!row) { outcomes.push(null); continue; }
      const change = changes.get(row.target_id)?.change ?? changeOf(row);
      // The record shows when the latest replaced URL was last used; older ones are not shown.
      if (row === viaPrevious) change.previousLastUsedAt = op.at;
      const judgement = judge(row, change, op);
      if (judgement.result) results.push(judgement.result);
      changes.set(row.target_id, { row, change });
      logged.push(judgement.logged);
      outcomes.push({ pingId: op.id });
    }
    const version = await saveStates(tx, [...changes.values()].map((c) => c.change));
    await insertPings(tx, logged);
    await saveOutputs(tx, batch.filter((op): op is OutputOp => op.kind === 'output'));
    await this.deps.results.writeNow(tx, ...results);
    const committed = [...changes.values()].map(({ row, change }) => ({ row: judgedRowOf(row), saved: change, version: version! }));
    return { outcomes, committed };
  }
}

/** The part of a locked row a remembered heartbeat keeps. */
const judgedRowOf = (row: LockedRow): JudgedRow => ({
  target_id: row.target_id, org_id: row.org_id, token_hash: row.token_hash, counting: row.counting,
  period: row.period, grace: row.grace, max_runtime: row.max_runtime,
});

/**
 * Applies one ping to its heartbeat's pending change: the ping's log row, and the result if the
 * verdict changed. A ping older than one already applied (overlapping batches: its batch reached the
 * row later) is logged but judges nothing, so the newest ping always has the last word.
 */
function judge(row: JudgedRow, change: StateChange, op: PingOp): { logged: PingRow; result: CheckResultRecord | null } {
  let runMs: number | null = null;
  let result: CheckResultRecord | null = null;
  const late = change.state.lastPingAt !== null && op.at < change.state.lastPingAt;
  if (row.counting && !late) {
    const next = applyPing(change.state, { signal: op.signal, exitCode: op.exitCode, at: op.at });
    change.state = next.state;
    change.dueAt = nextDueAt(change.dueAt, next.state, row, op.at);
    runMs = next.runMs;
    if (op.signal === 'fail') change.lastFailPingId = op.id;
    if (next.result) result = resultOf(row, next.result, runMs ?? 0);
  }
  return { logged: { id: op.id, targetId: row.target_id, at: op.at, signal: op.signal, exitCode: op.exitCode, runMs, counted: row.counting }, result };
}

/**
 * The due time kept for an `up` heartbeat: it may be early (the sweep moves it on), never late. A
 * routine success leaves it as it is, so the row's update touches no indexed column.
 */
function nextDueAt(stored: number | null, state: Parameters<typeof dueAt>[0], timing: HeartbeatTiming, now: number): number | null {
  const due = storedDueAt(dueAt(state, timing), now);
  return due === null || stored === null ? due : Math.min(stored, due);
}

/**
 * The heartbeats the pings' tokens name, locked in id order, with what the rule needs of their
 * monitors and the routine successes logged since each row was written folded in. Each URL kind is
 * looked up through its own index first: one `OR` over the three made the planner guess thousands
 * of rows and hash-join every monitor. The match is tested again on the locked row, so a rotation
 * committed while this waited is seen.
 */
async function lockHeartbeats(tx: Executor, pings: readonly PingOp[], now: Date): Promise<LockedRow[]> {
  const hashes = [...new Set(pings.map((p) => p.tokenHash))];
  const rows = await tx.query<LockedRow>(
    `WITH named AS (
        SELECT target_id FROM heartbeats WHERE token_hash = ANY($1::text[])
        UNION SELECT target_id FROM heartbeats WHERE previous_token_hash = ANY($1::text[]) AND previous_expires_at > $2
        UNION SELECT target_id FROM heartbeats WHERE ${HAS_RETIRED_SQL} AND retired_token_hashes && $1::text[])
     SELECT ${LOCKED_COLUMNS.map((c) => `h.${c}`).join(', ')}, ${TIMING_SQL}, ${COUNTING_SQL} AS counting, ${LOGGED_SUCCESS_SQL} AS logged_success
       FROM named JOIN heartbeats h ON h.target_id = named.target_id JOIN targets t ON t.id = h.target_id JOIN orgs o ON o.id = t.org_id
      WHERE h.token_hash = ANY($1::text[]) OR (h.previous_token_hash = ANY($1::text[]) AND h.previous_expires_at > $2)
         OR (${HAS_RETIRED_SQL} AND h.retired_token_hashes && $1::text[])
      ORDER BY h.target_id FOR UPDATE OF h`, [hashes, now], { prepared: 'heartbeat_lock' });
  return rows.map(withLoggedSuccess);
}
