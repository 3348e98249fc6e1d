// `{{key}}` references substituted just before a probe runs (monitoring-api.md, http rule 1; flow
// fill values), so probes only ever see final values, told which parts hold a secret. Which fields
// may hold references, and where a secret may go, is decided at write time
// (src/targets/redaction.ts `referencedTexts`). A check whose stored credential or referenced secret
// cannot be opened (sealed under a key no longer configured) does not run with the secret missing:
// its result is an `error` saying why.
import type { CheckSpecT } from '../targets/check-specs.js';
import { findReferences, substituteReferences, type OrgVariables } from '../variables/index.js';
import type { ProbeResult, SecretParts } from './types.js';

/** The spec as the probe runs it (with the parts a secret was substituted into), or the result of a check that cannot run. */
export type RunnableSpec = { spec: CheckSpecT; secretParts?: SecretParts } | { unrunnable: ProbeResult };

const unrunnable = (error: string): RunnableSpec => ({ unrunnable: { status: 'error', duration_ms: 0, error } });

/**
 * `spec` (null: its credentials could not be opened) with the variables it references (`refs`)
 * substituted from the org's; a reference without a value (a secret that cannot be opened) makes
 * the check unrunnable rather than sending `{{key}}` as written.
 */
export function runnableSpec(spec: CheckSpecT | null, refs: readonly string[], variables: OrgVariables): RunnableSpec {
  if (!spec) return unrunnable('a stored credential was sealed under a key that is no longer configured');
  if (refs.length === 0) return { spec };
  const missing = refs.filter((key) => !variables.values.has(key));
  if (missing.length) {
    return unrunnable(`variable ${missing.map((key) => `{{${key}}}`).join(', ')} cannot be read: a secret sealed under a key that is no longer configured`);
  }
  const secretRefs = refs.filter((key) => variables.secrets.has(key));
  const secretParts = spec.type === 'http' && secretRefs.length ? secretPartsOf(spec, variables.secrets, secretRefs.map((key) => variables.values.get(key)!)) : undefined;
  return { spec: resolveSpec(spec, variables.values), ...(secretParts && { secretParts }) };
}

/** The headers (by lower-cased name) and whether the body of an http check reference a secret (rule 1 allows them nowhere else). */
function secretPartsOf(spec: Extract<CheckSpecT, { type: 'http' }>, secrets: ReadonlySet<string>, values: readonly string[]): SecretParts {
  const holdsSecret = (text: string | null | undefined): boolean => !!text?.includes('{{') && findReferences(text).some((key) => secrets.has(key));
  const headers = new Set(Object.entries(spec.headers).filter(([, value]) => holdsSecret(value)).map(([name]) => name.toLowerCase()));
  return { headers, body: holdsSecret(spec.body), values };
}

function resolveSpec(spec: CheckSpecT, values: ReadonlyMap<string, string>): CheckSpecT {
  const sub = (text: string): string => (text.includes('{{') ? substituteReferences(text, values) : text);
  switch (spec.type) {
    case 'http':
      return {
        ...spec,
        url: sub(spec.url),
        headers: Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, sub(v)])),
        body: spec.body == null ? spec.body : sub(spec.body),
        expected_body_contains: spec.expected_body_contains == null ? spec.expected_body_contains : sub(spec.expected_body_contains),
      };
    case 'flow':
      return { ...spec, steps: spec.steps.map((step) => (step.op === 'fill' ? { ...step, value: sub(step.value) } : step)) };
    default:
      return spec;
  }
}
