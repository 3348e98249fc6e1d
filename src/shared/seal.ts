// Sealing secrets at rest (variables, share tokens, stored credentials): AES-256-GCM under the
// key-encryption key `security.credentials_kek_base64` (the services generate one when none is
// configured). A sealer without a key stores values marked `plain:`, so that nothing pretends to be
// sealed; values so stored by earlier versions are still read under any key.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { cfg, ConfigError, type Config } from '../config/load.js';

export const KEK_CONFIG_KEY = 'security.credentials_kek_base64';

/** What every response shows in place of a stored secret; refused when written back (`REDACTION_SENTINEL`). */
export const REDACTED = '***';

const VERSION = 'kw1';
const PLAIN = 'plain:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

export interface Sealer {
  /** Short fingerprint of the configured key (stored in each sealed value); null without a key. */
  readonly keyId: string | null;
  /** `kw1:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts) with a key, `plain:<value>` without. */
  seal(plaintext: string): string;
  /**
   * The plaintext, or null when the value was sealed under a key that is not configured.
   * Throws `SealError` when a value sealed under the configured key fails authentication (tampering)
   * or the stored string is not in a known format.
   */
  open(stored: string): string | null;
}

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

/** The key id: a short hash of the key, so a row sealed under another key is recognised as such. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('keepwatch-kek-id\0').update(key).digest('base64url').slice(0, 8);
}

/** Decodes and checks the configured KEK; throws ConfigError naming the key when it is not 32 bytes of base64. */
export function parseKek(base64: string): Buffer {
  const text = base64.trim();
  if (!BASE64_RE.test(text)) throw new ConfigError(KEK_CONFIG_KEY, 'must be base64 (of 32 random bytes)');
  const key = Buffer.from(text, 'base64');
  if (key.length !== KEY_BYTES) {
    throw new ConfigError(KEK_CONFIG_KEY, `must decode to ${KEY_BYTES} bytes, got ${key.length} (generate one with: openssl rand -base64 32)`);
  }
  return key;
}

/**
 * The process's sealer from the configuration, else from `fallbackKek` (a key the embedded store
 * keeps in its data dir); warns once, at boot, when values will be stored unsealed.
 */
export function createSealer(config: Config, log: Pick<Logger, 'warn'>, fallbackKek?: () => string): Sealer {
  const configured = cfg.optStr(config, KEK_CONFIG_KEY) || fallbackKek?.();
  if (configured === undefined || configured === '') {
    log.warn({ key: KEK_CONFIG_KEY }, 'no key-encryption key configured: secrets are stored unsealed');
    return sealerFor(null);
  }
  return sealerFor(parseKek(configured));
}

/** A sealer over `key` (32 bytes), or a plain-mode sealer for null. */
export function sealerFor(key: Buffer | null): Sealer {
  if (key && key.length !== KEY_BYTES) throw new SealError(`a key must be ${KEY_BYTES} bytes`);
  const keyId = key ? keyIdOf(key) : null;
  return {
    keyId,
    seal(plaintext) {
      if (!key) return PLAIN + plaintext;
      const header = `${VERSION}:${keyId}`;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      // The header is authenticated too: a value cannot be moved under another version or key id.
      cipher.setAAD(Buffer.from(header));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [header, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(':');
    },
    open(stored) {
      if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
      const parts = stored.split(':');
      if (parts.length !== 5 || parts[0] !== VERSION || !parts.slice(1).every((p) => B64URL_RE.test(p))) {
        throw new SealError('not a sealed value');
      }
      const [version, storedKeyId, ivText, tagText, ctText] = parts as [string, string, string, string, string];
      if (!key || storedKeyId !== keyId) return null;
      const iv = Buffer.from(ivText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SealError('sealed value is malformed');
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(`${version}:${storedKeyId}`));
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(Buffer.from(ctText, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SealError('sealed value failed authentication (tampered or corrupted)');
      }
    },
  };
}
