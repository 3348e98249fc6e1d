// `{{key}}` references substituted just before a probe runs (monitoring-api.md, http rule 1; flow
// fill values), so probes only ever see final values. Which fields may hold references, and where a
// secret may go, is decided at write time (src/targets/redaction.ts `referencedTexts`). A check
// whose stored credential or referenced secret cannot be opened (sealed under a key no longer
// configured) does not run with the secret missing: its result is an `error` saying why.
import type { CheckSpecT } from '../targets/check-specs.js';
import { substituteReferences } from '../variables/index.js';
import type { ProbeResult } from './types.js';

/** The spec as the probe runs it, or the result of a check that cannot run. */
export type RunnableSpec = { spec: CheckSpecT } | { unrunnable: ProbeResult };

const unrunnable = (error: string): RunnableSpec => ({ unrunnable: { status: 'error', duration_ms: 0, error } });

/**
 * `spec` (null: its credentials could not be opened) with the variables it references (`refs`)
 * substituted from `values`; a reference missing from `values` (a secret that cannot be opened)
 * makes the check unrunnable rather than sending `{{key}}` as written.
 */
export function runnableSpec(spec: CheckSpecT | null, refs: readonly string[], values: ReadonlyMap<string, string>): RunnableSpec {
  if (!spec) return unrunnable('a stored credential was sealed under a key that is no longer configured');
  if (refs.length === 0) return { spec };
  const missing = refs.filter((key) => !values.has(key));
  if (missing.length) {
    return unrunnable(`variable ${missing.map((key) => `{{${key}}}`).join(', ')} cannot be read: a secret sealed under a key that is no longer configured`);
  }
  return { spec: resolveSpec(spec, values) };
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
