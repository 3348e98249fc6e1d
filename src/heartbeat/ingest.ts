// Heartbeat ping ingest (monitoring-api.md, "Heartbeat ping endpoint"): group commit. Pings that
// arrive while a commit is in flight wait for the next one and share its transaction; each caller
// is answered after the commit that holds its ping, so an acknowledged ping survives a crash.
//
// One transaction per batch: find and lock the heartbeats by token hash (the current token, or the
// previous one during its overlap) in one statement, judge each ping in arrival order, and save the
// states, the ping log and any verdict-changing results in one statement each. Monitors are not
// locked: a PATCH holds its monitor with NO KEY UPDATE, which the results' foreign keys pass.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import type { CheckResultRecord, ResultWriter } from '../results/index.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { changeOf, COUNTING_SQL, insertPings, resultOf, saveOutputs, saveStates, type HeartbeatRow, type PingRow, type StateChange } from './store.js';
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
  'window_from', 'due_at', 'previous_last_used_at'] as const;
type LockedRow = Pick<HeartbeatRow, (typeof LOCKED_COLUMNS)[number]> & HeartbeatTiming & { counting: boolean };

export class PingIngest {
  private queue: Op[] = [];
  private readonly running = new Set<Promise<void>>();
  private kicked = false;
  private readonly maxBatch: number;
  private readonly maxQueued: number;
  private readonly maxInflight: number;

  constructor(private readonly deps: { db: Db; results: ResultWriter; clock: Clock; log: Logger }, options: IngestOptions = {}) {
    this.maxBatch = options.maxBatch ?? 1_000;
    this.maxQueued = options.maxQueued ?? 20_000;
    this.maxInflight = options.maxInflight ?? (deps.db.kind === 'pg' ? 4 : 1);
  }

  /** Resolves once the ping (by its token's hash) is committed, or known to match no ping URL. */
  ping(tokenHash: string, signal: PingSignal, exitCode: number | null): Promise<PingOutcome> {
    return new Promise((settle, fail) => {
      this.enqueue({ kind: 'ping', id: newId(), tokenHash, signal, exitCode, at: this.deps.clock.now().getTime(), settle, fail });
    });
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
      const outcomes = await this.deps.db.transaction((tx) => this.commit(tx, batch));
      batch.forEach((op, i) => (op.kind === 'ping' ? op.settle(outcomes[i] ?? null) : op.settle()));
    } catch (err) {
      this.deps.log.error({ err, ops: batch.length }, 'heartbeat ping batch failed');
      for (const op of batch) op.fail(err);
    }
  }

  /** The outcome of each op of `batch`, by position (outputs have none). */
  private async commit(tx: Executor, batch: readonly Op[]): Promise<PingOutcome[]> {
    const pings = batch.filter((op): op is PingOp => op.kind === 'ping');
    const outcomes: PingOutcome[] = [];
    const rows = pings.length ? await lockHeartbeats(tx, pings, this.deps.clock.now()) : [];
    const byToken = new Map(rows.map((r) => [r.token_hash, r]));
    const byPrevious = new Map(rows.filter((r) => r.previous_token_hash).map((r) => [r.previous_token_hash!, r]));
    const changes = new Map<string, StateChange>();
    const logged: PingRow[] = [];
    const results: CheckResultRecord[] = [];
    for (const op of batch) {
      if (op.kind === 'output') { outcomes.push(null); continue; }
      let row = byToken.get(op.tokenHash);
      const previous = byPrevious.get(op.tokenHash);
      if (!row && previous && previous.previous_expires_at! > new Date(op.at)) row = previous;
      if (!row) { outcomes.push(null); continue; }
      const change = changes.get(row.target_id) ?? changeOf(row);
      if (row !== byToken.get(op.tokenHash)) change.previousLastUsedAt = op.at;
      let runMs: number | null = null;
      // Batches overlap: a ping older than one already applied (its batch locked the row later) is
      // logged but judges nothing, so the newest ping always has the last word.
      const late = change.state.lastPingAt !== null && op.at < change.state.lastPingAt;
      if (row.counting && !late) {
        const next = applyPing(change.state, { signal: op.signal, exitCode: op.exitCode, at: op.at });
        change.state = next.state;
        change.dueAt = nextDueAt(change.dueAt, next.state, row);
        runMs = next.runMs;
        if (op.signal === 'fail') change.lastFailPingId = op.id;
        if (next.result) results.push(resultOf(row, next.result, runMs ?? 0));
      }
      changes.set(row.target_id, change);
      logged.push({ id: op.id, targetId: row.target_id, at: op.at, signal: op.signal, exitCode: op.exitCode, runMs, counted: row.counting });
      outcomes.push({ pingId: op.id });
    }
    await saveStates(tx, [...changes.values()]);
    await insertPings(tx, logged);
    await saveOutputs(tx, batch.filter((op): op is OutputOp => op.kind === 'output'));
    await this.deps.results.writeNow(tx, ...results);
    return outcomes;
  }
}

/**
 * The due time kept for an `up` heartbeat: it may be early (the sweep moves it on), never late. A
 * routine success leaves it as it is, so the row's update touches no indexed column.
 */
function nextDueAt(stored: number | null, state: Parameters<typeof dueAt>[0], timing: HeartbeatTiming): number | null {
  const due = dueAt(state, timing);
  return due === null || stored === null ? due : Math.min(stored, due);
}

/** The heartbeats the pings' tokens name, locked in id order, with what the rule needs of their monitors. */
async function lockHeartbeats(tx: Executor, pings: readonly PingOp[], now: Date): Promise<LockedRow[]> {
  const hashes = [...new Set(pings.map((p) => p.tokenHash))];
  return tx.query<LockedRow>(
    `SELECT ${LOCKED_COLUMNS.map((c) => `h.${c}`).join(', ')},
       (t.check_spec->>'period')::bigint::float8 AS period, (t.check_spec->>'grace')::bigint::float8 AS grace,
       (t.check_spec->>'max_runtime')::bigint::float8 AS max_runtime,
       ${COUNTING_SQL} AS counting
       FROM heartbeats h JOIN targets t ON t.id = h.target_id JOIN orgs o ON o.id = t.org_id
      WHERE h.token_hash = ANY($1::text[]) OR (h.previous_token_hash = ANY($1::text[]) AND h.previous_expires_at > $2)
      ORDER BY h.target_id FOR UPDATE OF h`, [hashes, now], { prepared: 'heartbeat_lock' });
}
