// `login_attempts` rows (service-api.md, Events 4). IP and User-Agent are kept only as
// HMAC-SHA256 under `auth.fingerprint_salt`.
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { BatchWriter, valuesList } from '../shared/batch-writer.js';
import { hmacSha256 } from '../shared/ids.js';

export type LoginMethod = 'forge_a_oauth' | 'idp_b_oauth' | 'idp_c_oauth' | 'forge_d_oauth' | 'passkey' | 'api_token' | 'magic_link';

export interface LoginAttempt {
  method: LoginMethod;
  success: boolean;
  failureReason?: string;
  userId?: string;
  tokenId?: string;
  ip?: string;
  userAgent?: string;
}

export class Fingerprinter {
  constructor(private readonly salt: string) {}
  hash(value: string | undefined): string | null {
    return value ? hmacSha256(this.salt, value) : null;
  }
}

export function loginAttemptWriter(db: Db, fingerprint: Fingerprinter, log: Logger): BatchWriter<LoginAttempt> {
  return new BatchWriter<LoginAttempt>({
    name: 'login_attempts',
    log,
    write: async (rows) => {
      const params = rows.flatMap((a) => [a.method, a.success, a.failureReason ?? null, a.userId ?? null, a.tokenId ?? null,
        fingerprint.hash(a.ip), fingerprint.hash(a.userAgent)]);
      await db.query(`INSERT INTO login_attempts (method, success, failure_reason, user_id, token_id, ip_hash, user_agent_hash)
        VALUES ${valuesList(rows.length, 7)}`, params);
    },
  });
}
