// Secrets a zero-config install generates for itself into `data_dir` (mode 0600), never logged.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { randomToken } from '../shared/ids.js';

export const OPERATOR_SECRET_FILE = 'operator-secret';
export const FINGERPRINT_SALT_FILE = 'fingerprint-salt';
export const CREDENTIALS_KEK_FILE = 'credentials-kek';

export function secretPath(dataDir: string, name: string): string {
  return join(dataDir, name);
}

export function readSecretFile(dataDir: string, name: string): string | null {
  const path = secretPath(dataDir, name);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() || null : null;
}

/** Reads the secret, creating it (by default 32 random bytes, base64url) when absent. */
export function readOrCreateSecret(dataDir: string, name: string, make: () => string = () => randomToken(32)): { value: string; created: boolean } {
  const existing = readSecretFile(dataDir, name);
  if (existing) return { value: existing, created: false };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const value = make();
  writeFileSync(secretPath(dataDir, name), value + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(secretPath(dataDir, name), 0o600);
  return { value, created: true };
}
