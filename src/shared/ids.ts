import { randomBytes, randomFillSync, createHash, createHmac, hash, timingSafeEqual } from 'node:crypto';
import { v7 } from 'uuid';

// uuid's v7 draws its random bytes through WebCrypto on every call (about 6 us, a tenth of a
// heartbeat ping's whole cost); these come from a pool refilled 256 ids at a time. The counter
// keeps ids from one millisecond in order, as the package's own state does.
const pool = Buffer.allocUnsafe(16 * 256);
let poolAt = pool.length;
let lastMs = -Infinity;
let seq = 0;

/** UUIDv7: time-ordered ids, so inserts append to the index. */
export function newId(): string {
  if (poolAt === pool.length) { randomFillSync(pool); poolAt = 0; }
  const random = pool.subarray(poolAt, (poolAt += 16));
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) lastMs++;
  }
  return v7({ random, msecs: lastMs, seq });
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

/** `bytes` random bytes as base64url (32 bytes -> 43 characters). */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

// One-shot hashing: about half the cost of createHash() on the request path (token cache key).
export const sha256 = (s: string): string => hash('sha256', s, 'base64url');

export const hmacSha256 = (key: string, s: string): string => createHmac('sha256', key).update(s).digest('hex');

/** Constant-time string comparison; lengths are compared through digests so they leak nothing either. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
