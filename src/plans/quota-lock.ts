// Pooled quotas are checked at the insert, under a per-account, per-pool transaction lock: two
// creates racing at the cap serialise here, and the second sees the first's row.
import type { Executor } from '../db/db.js';

/** Held until the transaction ends. `pool` names what is counted (`targets`, `channels`, ...). */
export async function lockQuotaPool(tx: Executor, pool: string, accountId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2::text, 0))`, [pool, accountId]);
}
