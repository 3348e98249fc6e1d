import { randomBytes, createHash, createHmac, hash, timingSafeEqual } from 'node:crypto';
import { v7 } from 'uuid';

/** UUIDv7: time-ordered ids, so inserts append to the index. */
export const newId = (): string => v7();

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
