// Every quota, rate-limit or abuse rejection is appended to `quota_events`, never blocking
// the response (service-api.md, Events 6).
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { BatchWriter, valuesList } from '../shared/batch-writer.js';
import type { Fingerprinter } from '../identity/login-attempts.js';

export interface QuotaEvent {
  event: 'quota_exceeded' | 'rate_limited' | 'abuse_blocked';
  quota?: string;
  accountId?: string;
  userId?: string;
  details?: Record<string, unknown>;
  ip?: string;
}

export function quotaEventWriter(db: Db, fingerprint: Fingerprinter, log: Logger): BatchWriter<QuotaEvent> {
  return new BatchWriter<QuotaEvent>({
    name: 'quota_events',
    log,
    write: async (rows) => {
      const params = rows.flatMap((e) => [e.event, e.quota ?? null, e.accountId ?? null, e.userId ?? null,
        JSON.stringify(e.details ?? {}), fingerprint.hash(e.ip)]);
      await db.query(`INSERT INTO quota_events (event, quota, account_id, user_id, details, ip_hash)
        VALUES ${valuesList(rows.length, 6)}`, params);
    },
  });
}
