// Minting heartbeat ping URLs (CONTRACT.md: `{auth.public_base_url}/ping/{token}`, 32 random bytes
// base64url). A single create, a duplicate and a bulk create all mint in the write's transaction.
import type { Executor } from '../db/db.js';
import { randomToken, sha256 } from '../shared/ids.js';
import type { Sealer } from '../shared/seal.js';

export const PING_TOKEN_BYTES = 32;

export const pingUrl = (publicBaseUrl: string, token: string): string => `${publicBaseUrl.replace(/\/+$/, '')}/ping/${token}`;

/** The lookup key of a presented token. */
export const pingTokenHash = (token: string): string => sha256(token);

/** Mints and stores the ping tokens of new heartbeat monitors in one statement; returns each token by target id. */
export async function mintPingTokens(tx: Executor, sealer: Sealer, orgId: string, targetIds: readonly string[]): Promise<Map<string, string>> {
  const tokens = new Map(targetIds.map((id) => [id, randomToken(PING_TOKEN_BYTES)]));
  if (tokens.size === 0) return tokens;
  const ids = [...tokens.keys()];
  await tx.query(
    `INSERT INTO heartbeats (target_id, org_id, token_hash, sealed_token)
     SELECT t.id, $1, t.hash, t.sealed FROM unnest($2::uuid[], $3::text[], $4::text[]) AS t(id, hash, sealed)`,
    [orgId, ids, ids.map((id) => pingTokenHash(tokens.get(id)!)), ids.map((id) => sealer.seal(tokens.get(id)!))]);
  return tokens;
}
