// A target can echo what a check sent it: a same-origin redirect to `/x?<token>`, an error page
// quoting the Authorization header. A secret variable's value and a stored credential are write-only
// (service-api.md, "Variable"; monitoring-api.md, credentials read back as `***`), so a result shows
// `***` wherever one appears, as sent or percent-encoded. Values shorter than
// MASKED_MIN_LENGTH are not masked: they would mask ordinary text ("1" in every address).
import { REDACTED } from '../targets/constants.js';
import type { CheckSpecT } from '../targets/check-specs.js';
import type { ProbeResult } from './types.js';

export const MASKED_MIN_LENGTH = 4;

/** The texts a result of `spec` must not show: its stored credentials and the secret values substituted into it. */
export function secretTextsOf(spec: CheckSpecT, secretValues: readonly string[] = []): string[] {
  const credentials = spec.type === 'http' ? [spec.bearer_token, spec.basic_auth?.[1]] : [];
  const texts = new Set<string>();
  for (const value of [...credentials, ...secretValues]) {
    if (!value || value.length < MASKED_MIN_LENGTH) continue;
    texts.add(value);
    texts.add(encodeURIComponent(value));
  }
  // Longest first, so a secret holding another is masked whole.
  return [...texts].sort((a, b) => b.length - a.length);
}

function maskText(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (out.includes(secret) ? out.replaceAll(secret, REDACTED) : out), text);
}

function maskValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return maskText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => maskValue(item, secrets));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskValue(v, secrets)]));
  return value;
}

/** `result` with every occurrence of `secrets` in its error and kind fields shown as `***`. */
export function maskSecrets(result: ProbeResult, secrets: readonly string[]): ProbeResult {
  if (!secrets.length) return result;
  return {
    ...result,
    error: result.error === null ? null : maskText(result.error, secrets),
    ...(result.fields && { fields: maskValue(result.fields, secrets) as Record<string, unknown> }),
  };
}
