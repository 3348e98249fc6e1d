// Delivers the outbox, at least once. Each pass claims due rows, as many as there are free send
// slots, with one UPDATE ... SKIP LOCKED (pushing them a lease ahead, so a node that dies mid-send
// leaves them to be retried after it), and sends them outside any transaction without waiting for
// them: a hanging receiver holds only its own slot. Each send records its outcome: delivered,
// retried after an exponential backoff with jitter, or dead after MAX_ATTEMPTS. The poll's passes
// also queue reminders that have come due. Several nodes may run it on one store.
import type { Logger } from 'pino';
import { openConfig, type StoredChannelConfig } from '../channels/configs.js';
import { cfg, type Config } from '../config/load.js';
import type { Db } from '../db/db.js';
import { ACK_BUTTON_KINDS, mintAcknowledgeLink } from '../incidents/alert-actions.js';
import { suppressedAtSql } from '../maintenance/index.js';
import type { Clock } from '../shared/context.js';
import type { Sealer } from '../shared/seal.js';
import { DeliveryError, type Deliverer } from './deliver.js';
import { enqueueNotifications, reminderGapMs, type NotificationEvent } from './outbox.js';
import type { NotificationFacts } from './payloads.js';

/** Attempts before a notification is dead: with a 10 s base that is about 21 minutes of trying. */
export const MAX_ATTEMPTS = 8;
/**
 * Why a reminder was not sent: acknowledging or resolving stops reminders, including those already
 * queued or retrying. The status model has no "cancelled", so it ends `dead` with this reason.
 */
export const REMINDER_STOPPED = 'not sent: the incident was acknowledged or resolved first';
export const CHANNEL_SILENT = 'not sent: the channel was disabled, or its new address is not confirmed yet';
export const CHANNEL_DELETED = 'not sent: the channel was deleted';
/** The longest wait before a retry, the backoff's and a receiver's `Retry-After` alike. */
export const RETRY_DELAY_CAP_MS = 3_600_000;

export interface WorkerOptions {
  /** First retry delay; each later one doubles (capped at an hour), with +-20% jitter. */
  baseDelayMs?: number;
  /** How long a claimed row is left alone while its send runs. */
  leaseMs?: number;
  pollMs?: number;
  batch?: number;
}

export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  const delay = Math.min(RETRY_DELAY_CAP_MS, baseMs * 2 ** (attempt - 1));
  return Math.round(delay * (0.8 + 0.4 * random()));
}

interface ClaimedRow {
  id: string; event: NotificationEvent; attempts: number; kind: string | null; config: StoredChannelConfig | null;
  channel_id: string | null; acknowledge_button: boolean | null; acknowledged_at: Date | null;
  /** Whether the channel pages now; false for a deleted one too (`channel_id` null says which). */
  pages: boolean | null;
  incident_id: string; title: string | null; status: string; impact: string; cause: string | null;
  started_at: Date; ended_at: Date | null; reminders_sent: number; target_id: string | null; target_name: string | null;
}

export class NotificationWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  /** Sends under way, at most `batch`: a slow or hanging receiver holds its own slot, never the next claim. */
  private readonly sending = new Set<Promise<void>>();
  /** The last claim filled every free slot: more may be due, so a finished send claims again at once. */
  private backlog = false;
  private stopping = false;
  private readonly o: Required<WorkerOptions>;

  constructor(
    private readonly deps: { db: Db; clock: Clock; sealer: Sealer; log: Logger; deliverer: Deliverer; config: Config },
    options: WorkerOptions = {},
  ) {
    this.o = { baseDelayMs: 10_000, leaseMs: 60_000, pollMs: 1000, batch: 50, ...options };
  }

  start(): void {
    this.timer = setInterval(() => void this.pass(), this.o.pollMs);
    this.timer.unref();
  }

  /** No new pass starts; the one under way and the sends started finish. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping = true;
    await this.settled();
  }

  /** A pass, and every send it (or one it led to) started, finished: for callers that must see the outcome. */
  async tick(): Promise<void> {
    await this.pass();
    await this.settled();
  }

  private async settled(): Promise<void> {
    while (this.running || this.sending.size) await Promise.all([this.running, ...this.sending]);
  }

  /** Reminders due (on the poll's passes), then claims for the free send slots. Overlapping calls share the pass. */
  private pass(reminders = true): Promise<void> {
    if (this.stopping) return Promise.resolve();
    this.running ??= this.claimAndSend(reminders).catch((err: unknown) => this.deps.log.error({ err }, 'notification pass failed')).finally(() => { this.running = null; });
    return this.running;
  }

  private async claimAndSend(reminders: boolean): Promise<void> {
    if (reminders) await this.queueReminders();
    const room = this.o.batch - this.sending.size;
    if (room <= 0) return;
    const claimed = await this.claim(room);
    this.backlog = claimed.length === room;
    for (const row of claimed) {
      const send: Promise<void> = this.deliver(row)
        .catch((err: unknown) => this.deps.log.error({ err, notification: row.id }, 'notification send failed'))
        .finally(() => {
          this.sending.delete(send);
          if (this.backlog) void this.pass(false);
        });
      this.sending.add(send);
    }
  }

  /**
   * Reminders due on open, unacknowledged incidents that are not recovering. A monitor under a
   * suppressing maintenance window, paused, or held by its plan (no alerting) is passed over and
   * stays due: its reminder goes once the window ends, or it runs again. So is one whose reminders
   * were turned off (`renotify_interval_secs` 0) after its incident opened: the setting as it is
   * now decides, and turning them back on sends the one due.
   */
  private async queueReminders(): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.transaction(async (tx) => {
      const due = await tx.query<{ id: string; org_id: string; target_id: string | null; reminders_sent: number; renotify_interval_secs: number | null }>(
        `SELECT i.id, i.org_id, i.target_id, i.reminders_sent, t.renotify_interval_secs
           FROM incidents i LEFT JOIN targets t ON t.id = i.target_id
          WHERE i.next_reminder_at <= $1 AND i.status = 'open' AND i.acknowledged_at IS NULL AND i.recovering_since IS NULL
            AND t.held_at IS NULL AND t.enabled IS NOT FALSE AND t.renotify_interval_secs IS DISTINCT FROM 0
            AND NOT ${suppressedAtSql('i.target_id', '$1')}
          ORDER BY i.next_reminder_at LIMIT 100 FOR UPDATE OF i SKIP LOCKED`, [now]);
      if (!due.length) return;
      await enqueueNotifications(tx, due.map((d) => ({ orgId: d.org_id, incidentId: d.id, targetId: d.target_id, event: 'reminder' as const })), now);
      for (const d of due) {
        const interval = d.renotify_interval_secs ?? 0;
        const next = interval > 0 ? new Date(now.getTime() + reminderGapMs(interval, d.reminders_sent + 1)) : null;
        await tx.query('UPDATE incidents SET reminders_sent = reminders_sent + 1, next_reminder_at = $2 WHERE id = $1', [d.id, next]);
      }
    });
  }

  private async claim(limit: number): Promise<ClaimedRow[]> {
    const now = this.deps.clock.now();
    return this.deps.db.query<ClaimedRow>(
      `WITH claimed AS (
         UPDATE notifications SET next_attempt_at = $2, attempts = attempts + 1
          WHERE id IN (SELECT id FROM notifications n WHERE status = 'pending' AND next_attempt_at <= $1
                          -- In order per incident and channel: nothing overtakes an earlier one still retrying.
                          AND NOT EXISTS (SELECT 1 FROM notifications e
                                           WHERE e.incident_id = n.incident_id AND e.channel_id = n.channel_id AND e.status = 'pending'
                                             AND (e.created_at, e.id) < (n.created_at, n.id))
                        ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
          RETURNING id, event, attempts, channel_id, incident_id)
       SELECT c.id, c.event, c.attempts, ch.kind, ch.config, c.channel_id, ch.acknowledge_button, ch.enabled AND ch.verified_at IS NOT NULL AS pages, i.acknowledged_at, i.id AS incident_id, i.title, i.status, i.impact, i.cause,
              i.started_at, i.ended_at, i.reminders_sent, i.target_id, t.name AS target_name
         FROM claimed c JOIN incidents i ON i.id = c.incident_id
         LEFT JOIN notification_channels ch ON ch.id = c.channel_id
         LEFT JOIN targets t ON t.id = i.target_id`,
      [now, new Date(now.getTime() + this.o.leaseMs), limit]);
  }

  private async deliver(row: ClaimedRow): Promise<void> {
    // A retry follows the incident and the channel as they are now: disabled, or readdressed and
    // not confirmed since it was queued, the channel pages no more.
    const notSent = row.event === 'reminder' && (row.status !== 'open' || row.acknowledged_at) ? REMINDER_STOPPED
      : row.channel_id === null ? CHANNEL_DELETED : row.pages === false ? CHANNEL_SILENT : null;
    if (notSent) {
      // Not an attempt: nothing was sent.
      await this.deps.db.query(`UPDATE notifications SET status = 'dead', attempts = attempts - 1, last_error = $2 WHERE id = $1`, [row.id, notSent]);
      return;
    }
    const facts: NotificationFacts = {
      id: row.id, event: row.event,
      incident: {
        id: row.incident_id, title: row.title, status: row.status, impact: row.impact, cause: row.cause,
        started_at: row.started_at.toISOString(), ended_at: row.ended_at?.toISOString() ?? null, reminders_sent: row.reminders_sent,
      },
      monitor: row.target_id && row.target_name ? { id: row.target_id, name: row.target_name } : null,
    };
    if (row.event !== 'recovered' && row.status === 'open' && !row.acknowledged_at && row.acknowledge_button && row.channel_id && ACK_BUTTON_KINDS.has(row.kind ?? '')) {
      const link = await mintAcknowledgeLink(this.deps.db, cfg.str(this.deps.config, 'auth.public_base_url'), row.incident_id, row.channel_id, this.deps.clock.now());
      facts.actions = { acknowledge: link };
    }
    let failure: DeliveryError | null = null;
    try {
      const config = row.config && openConfig(row.config, this.deps.sealer);
      if (!config) throw new DeliveryError('a channel secret was sealed under a key that is no longer configured', { permanent: true });
      await this.deps.deliverer.send(config, facts);
    } catch (err) {
      failure = err instanceof DeliveryError ? err : new DeliveryError((err as Error).message);
    }
    const now = this.deps.clock.now();
    if (!failure) {
      await this.deps.db.query(`UPDATE notifications SET status = 'delivered', delivered_at = $2, last_error = NULL WHERE id = $1`, [row.id, now]);
      return;
    }
    const dead = row.attempts >= MAX_ATTEMPTS || failure.options.permanent === true;
    // A receiver's Retry-After may lengthen the wait, up to the cap: a day-long one would hold every later notice of the incident.
    const waitMs = Math.max(Math.min(failure.options.retryAfterMs ?? 0, RETRY_DELAY_CAP_MS), retryDelayMs(row.attempts, this.o.baseDelayMs));
    const next = new Date(now.getTime() + waitMs);
    await this.deps.db.query('UPDATE notifications SET status = $2, last_error = $3, next_attempt_at = $4 WHERE id = $1',
      [row.id, dead ? 'dead' : 'pending', failure.message.slice(0, 500), next]);
    if (dead) this.deps.log.warn({ notification: row.id, error: failure.message }, 'notification dead-lettered');
  }
}
