// The SQL of notification channels. Every function is scoped by org: a foreign id reads as absent.
import type { Executor } from '../db/db.js';
import type { WriteSource } from '../http/write-source.js';
import type { StoredChannelConfig } from './configs.js';
import type { ChannelKind } from './schema.js';

export interface ChannelRow {
  id: string;
  org_id: string;
  account_id: string;
  name: string;
  enabled: boolean;
  kind: ChannelKind;
  /** The validated config with its secrets sealed in place. */
  config: StoredChannelConfig;
  auto_bind_tags: string[];
  acknowledge_button: boolean;
  resolve_button: boolean;
  write_source: WriteSource;
  /** When an email channel's address was confirmed; other kinds are verified from creation. */
  verified_at: Date | null;
  verification_sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type ChannelValues = Pick<ChannelRow, 'name' | 'enabled' | 'config' | 'auto_bind_tags' | 'acknowledge_button' | 'resolve_button' | 'write_source'>;

/**
 * Inserts when the account has room (`limit` null is unlimited): the count is bound inside the
 * statement, under the pool lock the caller holds. null when the account is full.
 */
export async function insertChannel(tx: Executor, c: { id: string; orgId: string; accountId: string; limit: number | null } & ChannelValues): Promise<ChannelRow | null> {
  const [row] = await tx.query<ChannelRow>(
    `INSERT INTO notification_channels (id, org_id, account_id, name, enabled, kind, config, auto_bind_tags, acknowledge_button, resolve_button, write_source, verified_at)
     SELECT $1, $2, $3, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $7 <> 'email' THEN now() END
      WHERE $4::int IS NULL OR (SELECT count(*) FROM notification_channels WHERE account_id = $3) < $4::int
     RETURNING *`,
    [c.id, c.orgId, c.accountId, c.limit, c.name, c.enabled, c.config.type, JSON.stringify(c.config), c.auto_bind_tags,
      c.acknowledge_button, c.resolve_button, c.write_source]);
  return row ?? null;
}

export async function getChannelRow(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<ChannelRow | null> {
  const [row] = await db.query<ChannelRow>(
    `SELECT * FROM notification_channels WHERE org_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [orgId, id]);
  return row ?? null;
}

export async function listChannelRows(db: Executor, orgId: string, page: { limit: number; offset: number }): Promise<{ rows: ChannelRow[]; total: number }> {
  const rows = await db.query<ChannelRow>(
    'SELECT * FROM notification_channels WHERE org_id = $1 ORDER BY id LIMIT $2 OFFSET $3', [orgId, page.limit, page.offset]);
  const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notification_channels WHERE org_id = $1', [orgId]);
  return { rows, total: count?.n ?? 0 };
}

export async function updateChannelRow(tx: Executor, orgId: string, id: string, v: ChannelValues): Promise<ChannelRow | null> {
  const [row] = await tx.query<ChannelRow>(
    `UPDATE notification_channels SET name = $3, enabled = $4, kind = $5, config = $6, auto_bind_tags = $7,
       acknowledge_button = $8, resolve_button = $9, write_source = $10, updated_at = now(),
       -- A new email address must be confirmed again; any other kind needs no confirmation.
       verified_at = CASE WHEN $5 <> 'email' THEN coalesce(verified_at, now())
                          WHEN kind = 'email' AND config->>'to' = $6::jsonb->>'to' THEN verified_at END
     WHERE org_id = $1 AND id = $2 RETURNING *`,
    [orgId, id, v.name, v.enabled, v.config.type, JSON.stringify(v.config), v.auto_bind_tags, v.acknowledge_button, v.resolve_button, v.write_source]);
  return row ?? null;
}

/**
 * Deletes the channel and unbinds it from every monitor of the org in the caller's transaction.
 * The delete comes first: it locks the row, so a monitor write share-locking it (to bind it) either
 * finished before (and is unbound here) or waits and then finds it gone. Returns the unbound monitors.
 */
export async function deleteChannelRow(tx: Executor, orgId: string, id: string, writeSource: WriteSource): Promise<{ deleted: boolean; unbound: string[] }> {
  const gone = await tx.query('DELETE FROM notification_channels WHERE org_id = $1 AND id = $2 RETURNING id', [orgId, id]);
  if (!gone.length) return { deleted: false, unbound: [] };
  const unbound = await tx.query<{ id: string }>(
    `UPDATE targets SET alert_channel_ids = array_remove(alert_channel_ids, $2::uuid), write_source = $3, updated_at = now()
      WHERE org_id = $1 AND alert_channel_ids @> ARRAY[$2::uuid] RETURNING id`, [orgId, id, writeSource]);
  return { deleted: true, unbound: unbound.map((r) => r.id) };
}

export async function countAccountChannels(db: Executor, accountId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notification_channels WHERE account_id = $1', [accountId]);
  return row?.n ?? 0;
}
