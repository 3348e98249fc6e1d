// What monitors need of channels: which of the ids a binding names exist in the org.
import type { Executor } from '../db/db.js';
import { isUuid } from '../shared/ids.js';

/**
 * The subset of `ids` that are channels of `orgId`; a foreign, unknown or malformed id is simply
 * absent. `lock: 'share'` holds the rows until the transaction ends, so a concurrent delete waits.
 */
export async function existingChannelIds(db: Executor, orgId: string, ids: readonly string[], lock?: 'share'): Promise<Set<string>> {
  const wellFormed = ids.filter(isUuid);
  if (wellFormed.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM notification_channels WHERE org_id = $1 AND id = ANY($2::uuid[])${lock ? ' FOR SHARE' : ''}`, [orgId, wellFormed]);
  return new Set(rows.map((r) => r.id));
}
