// `{{key}}` references substituted just before a probe runs (monitoring-api.md, http rule 1; flow
// fill values), so probes only ever see final values. Which fields may hold references, and where a
// secret may go, is decided at write time (src/targets/redaction.ts `referencedTexts`).
import type { CheckSpecT } from '../targets/check-specs.js';
import { substituteReferences } from '../variables/index.js';

export function resolveSpec(spec: CheckSpecT, values: ReadonlyMap<string, string>): CheckSpecT {
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
