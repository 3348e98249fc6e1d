// Stored credentials (monitoring-api.md, "Target (monitor)"; PATCH rules 2): `basic_auth`,
// `bearer_token` and flow `fill` values are sealed in place before they are stored, read back as
// `***`, and `***` written back is refused. `basic_auth` is sealed whole, as its JSON pair.
import { AppError } from '../shared/errors.js';
import type { Sealer } from '../shared/seal.js';
import { findReferences, type ReferencedText } from '../variables/index.js';
import type { CheckSpecT } from './check-specs.js';
import { REDACTED } from './constants.js';

type StoredSpec = Record<string, unknown> & { type: CheckSpecT['type'] };
type Step = Record<string, unknown> & { op: string };

const sentinel = (field: string): AppError =>
  new AppError(400, 'REDACTION_SENTINEL', `${field}: contains "${REDACTED}", the redaction placeholder; send the real value (on an update, leave check out to keep the stored one)`, { field });

/**
 * Whether a secret from a body holds the placeholder a read shows (PATCH rule 2: "contains", not
 * "is": a value built around a copied `***` is as wrong as the bare placeholder). Channel secrets
 * follow the same rule (CONTRACT.md: redacted like check credentials).
 */
export const holdsSentinel = (value: unknown): boolean => typeof value === 'string' && value.includes(REDACTED);

/**
 * 400 `REDACTION_SENTINEL` when a credential in the body holds the placeholder. A read's values sent
 * back (`***`, `["***","***"]`) are refused, never taken as "keep": leave `check` out for that.
 */
export function refuseSentinel(check: CheckSpecT): void {
  if (check.type === 'http') {
    if (check.basic_auth?.some(holdsSentinel)) throw sentinel('check.basic_auth');
    if (holdsSentinel(check.bearer_token)) throw sentinel('check.bearer_token');
  }
  if (check.type === 'flow') {
    check.steps.forEach((step, i) => { if (step.op === 'fill' && holdsSentinel(step.value)) throw sentinel(`check.steps[${i}].value`); });
  }
}

/**
 * The check as stored: credentials sealed. Copies only what it changes (nested objects are shared
 * with `check`, which nothing mutates): a bulk create seals 10,000 of these.
 */
export function sealCredentials(check: CheckSpecT, sealer: Sealer): StoredSpec {
  const stored = { ...check } as StoredSpec;
  if (check.type === 'http') {
    if (check.basic_auth) stored.basic_auth = sealer.seal(JSON.stringify(check.basic_auth));
    if (check.bearer_token) stored.bearer_token = sealer.seal(check.bearer_token);
  }
  if (check.type === 'flow') {
    stored.steps = check.steps.map((step) => (step.op === 'fill' ? { ...step, value: sealer.seal(step.value) } : step));
  }
  return stored;
}

/** The check as every response shows it: a populated credential is `***`, null stays null. Copies only what it changes. */
export function redactCredentials(stored: StoredSpec): CheckSpecT {
  const shown = { ...stored };
  if (shown.type === 'http') {
    if (shown.basic_auth) shown.basic_auth = [REDACTED, REDACTED];
    if (shown.bearer_token) shown.bearer_token = REDACTED;
  }
  if (shown.type === 'flow') {
    shown.steps = (shown.steps as Step[]).map((step) => (step.op === 'fill' ? { ...step, value: REDACTED } : step));
  }
  return shown as unknown as CheckSpecT;
}

/**
 * The texts whose `{{key}}` references must resolve (http rule 1; flow fill values may name
 * secrets), with where a secret is allowed.
 */
export function referencedTexts(check: CheckSpecT): ReferencedText[] {
  if (check.type === 'http') {
    return [
      { field: 'check.url', text: check.url, secretAllowed: false },
      ...Object.entries(check.headers).map(([name, value]) => ({ field: `check.headers.${name}`, text: value, secretAllowed: true })),
      { field: 'check.body', text: check.body, secretAllowed: true },
      { field: 'check.expected_body_contains', text: check.expected_body_contains, secretAllowed: false },
    ];
  }
  if (check.type === 'flow') {
    return check.steps.flatMap((s, i) => (s.op === 'fill' ? [{ field: `check.steps[${i}].value`, text: s.value, secretAllowed: true }] : []));
  }
  return [];
}

/** Every key the texts reference, each once (stored as `variable_refs` for `used_by`). */
export const referencedKeys = (texts: readonly ReferencedText[]): string[] =>
  [...new Set(texts.flatMap((t) => (t.text ? findReferences(t.text) : [])))];

/**
 * The check as a probe needs it: credentials opened. null when one was sealed under a key that is
 * no longer configured (the check cannot run as its owner meant; the caller records an error).
 */
export function openCredentials(stored: StoredSpec, sealer: Sealer): CheckSpecT | null {
  const open = structuredClone(stored);
  if (open.type === 'http') {
    if (typeof open.basic_auth === 'string') {
      const pair = sealer.open(open.basic_auth);
      if (pair === null) return null;
      open.basic_auth = JSON.parse(pair) as [string, string];
    }
    if (typeof open.bearer_token === 'string') {
      const token = sealer.open(open.bearer_token);
      if (token === null) return null;
      open.bearer_token = token;
    }
  }
  if (open.type === 'flow') {
    for (const step of open.steps as Step[]) {
      if (step.op !== 'fill') continue;
      const value = sealer.open(String(step.value));
      if (value === null) return null;
      step.value = value;
    }
  }
  return open as unknown as CheckSpecT;
}
