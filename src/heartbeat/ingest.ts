// Heartbeat ping ingest (monitoring-api.md, "Heartbeat ping endpoint"): group commit. Pings that
// arrive while a commit is in flight wait for the next one and share its transaction; each caller
// is answered after the commit that holds its ping, so an acknowledged ping survives a crash.
//
// One transaction per batch: find the heartbeats by token hash (the current token, or the previous
// one during its overlap), lock their monitors (key share, in id order, as a PATCH would) and then
// the heartbeat rows (in id order), judge each ping in arrival order, and save the states, the ping
// log and any verdict-changing results in one statement each.
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/db.js';
import { NO_PROBE_REGION, type CheckResultRecord, type ResultWriter } from '../results/index.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { insertPings, saveOutputs, saveStates, stateOf, timingOf, type HeartbeatRow, type PingRow, type StateChange } from './store.js';
import { applyPing, dueAt, type PingSignal } from './verdict.js';

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
}

type LockedRow = HeartbeatRow & { check_spec: Record<string, unknown>; counting: boolean };

export class PingIngest {
  private queue: Op[] = [];
  private draining: Promise<void> | null = null;
  private readonly maxBatch: number;
  private readonly maxQueued: number;

  constructor(private readonly deps: { db: Db; results: ResultWriter; clock: Clock; log: Logger }, options: IngestOptions = {}) {
    this.maxBatch = options.maxBatch ?? 1_000;
    this.maxQueued = options.maxQueued ?? 20_000;
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
    while (this.draining) await this.draining;
  }

  private enqueue(op: Op): void {
    if (this.queue.length >= this.maxQueued) {
      op.fail(new AppError(503, 'SERVICE_UNAVAILABLE', 'too many pings waiting for the store; retry shortly', { retryAfter: 1 }));
      return;
    }
    this.queue.push(op);
    // The first op of an idle ingest waits one turn of the event loop for the pings that arrived with it.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const outcomes = await this.deps.db.transaction((tx) => this.commit(tx, batch));
        batch.forEach((op, i) => (op.kind === 'ping' ? op.settle(outcomes[i] ?? null) : op.settle()));
      } catch (err) {
        this.deps.log.error({ err, ops: batch.length }, 'heartbeat ping batch failed');
        for (const op of batch) op.fail(err);
      }
    }
    this.draining = null;
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
      const change = changes.get(row.target_id) ?? {
        targetId: row.target_id, state: stateOf(row), dueAt: row.due_at?.getTime() ?? null,
        lastFailPingId: row.last_fail_ping_id, previousLastUsedAt: row.previous_last_used_at?.getTime() ?? null,
      };
      if (row !== byToken.get(op.tokenHash)) change.previousLastUsedAt = op.at;
      let runMs: number | null = null;
      if (row.counting) {
        const timing = timingOf(row.check_spec);
        const next = applyPing(change.state, { signal: op.signal, exitCode: op.exitCode, at: op.at });
        change.state = next.state;
        change.dueAt = dueAt(next.state, timing);
        runMs = next.runMs;
        if (op.signal === 'fail') change.lastFailPingId = op.id;
        if (next.result) {
          results.push({
            targetId: row.target_id, orgId: row.org_id, region: NO_PROBE_REGION, checkedAt: new Date(next.result.at),
            status: next.result.status, duration_ms: runMs ?? 0, error: next.result.error,
          });
        }
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
 * The heartbeats the pings' tokens name, locked. Monitors are key-share locked first, in id order,
 * so a batch that writes a result (whose foreign key takes that lock) queues behind a PATCH of the
 * monitor instead of deadlocking with it; the token is matched again on the locked rows.
 */
async function lockHeartbeats(tx: Executor, pings: readonly PingOp[], now: Date): Promise<LockedRow[]> {
  const hashes = [...new Set(pings.map((p) => p.tokenHash))];
  const found = await tx.query<{ target_id: string }>(
    `SELECT target_id FROM heartbeats WHERE token_hash = ANY($1::text[])
      UNION SELECT target_id FROM heartbeats WHERE previous_token_hash = ANY($1::text[]) AND previous_expires_at > $2`, [hashes, now]);
  if (found.length === 0) return [];
  const ids = found.map((r) => r.target_id);
  await tx.query('SELECT id FROM targets WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE', [ids]);
  return tx.query<LockedRow>(
    `SELECT h.*, t.check_spec, (t.enabled AND t.held_at IS NULL AND o.deleted_at IS NULL) AS counting
       FROM heartbeats h JOIN targets t ON t.id = h.target_id JOIN orgs o ON o.id = t.org_id
      WHERE h.target_id = ANY($1::uuid[]) ORDER BY h.target_id FOR UPDATE OF h`, [ids]);
}
