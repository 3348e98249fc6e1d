// `{{key}}` references (monitoring-api.md, http rule 1): finding them, checking them against the
// org's variables, substituting them, and counting who uses a variable.
//
// Syntax: `{{key}}`, with optional spaces inside the braces (`{{ key }}`), as in Mustache-style
// templates. A name made of letters, digits and `_` is a reference even when it is not a valid key
// (`{{API_KEY}}`), so a typo is refused as unresolved rather than sent literally. Anything else
// between braces (`{{ $json.x }}`, `{{}}`) is not a reference and stays literal text.
import type { Executor } from '../db/db.js';
import { AppError } from '../shared/errors.js';

const REFERENCE_RE = /\{\{ *([A-Za-z0-9_]+) *\}\}/g;

/** The names referenced in `text`, each once, in order of first appearance. */
export function findReferences(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(REFERENCE_RE), (m) => m[1]!))];
}

/** Replaces every reference whose name `values` holds; other references stay as written. */
export function substituteReferences(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(REFERENCE_RE, (whole, name: string) => values.get(name) ?? whole);
}

export interface ReferencedText {
  /** The input's path, as the error's `field` (e.g. `check.url`, `check.headers.Authorization`). */
  field: string;
  text: string | null | undefined;
  /** Whether a secret variable may appear here (monitoring-api.md: header values and the body only). */
  secretAllowed: boolean;
}

export interface VariableKind { key: string; is_secret: boolean }

/**
 * Throws 422 `UNRESOLVED_VARIABLE` naming the first field that references a key the org has no
 * variable for, or a secret where secrets are not allowed. Pass the org's variables as loaded by
 * `listVariableKinds(tx, orgId, 'share')` in the transaction that saves the referencing object.
 */
export function checkReferences(input: { texts: readonly ReferencedText[]; variables: Iterable<VariableKind> }): void {
  const kinds = new Map<string, boolean>();
  for (const v of input.variables) kinds.set(v.key, v.is_secret);
  for (const { field, text, secretAllowed } of input.texts) {
    if (!text) continue;
    for (const key of findReferences(text)) {
      const isSecret = kinds.get(key);
      if (isSecret === undefined) {
        throw new AppError(422, 'UNRESOLVED_VARIABLE', `${field} references {{${key}}}, which is not a variable of this org`, { field });
      }
      if (isSecret && !secretAllowed) {
        throw new AppError(422, 'UNRESOLVED_VARIABLE', `${field} references the secret {{${key}}}; secrets are not allowed in this field`, { field });
      }
    }
  }
}

/** How many objects of one kind (monitors, ...) reference `key` in the org. */
export type VariableUsageCounter = (db: Executor, orgId: string, key: string) => Promise<number>;

const counters = new Set<VariableUsageCounter>();

/**
 * Registers a domain that references variables (the targets domain, at load). `used_by` is the sum
 * over the registered counters, and a variable with any use cannot be deleted. Returns the way to
 * unregister it.
 */
export function registerVariableUsage(counter: VariableUsageCounter): () => void {
  counters.add(counter);
  return () => void counters.delete(counter);
}

/** `used_by`: 0 while nothing is registered. */
export async function countVariableUsage(db: Executor, orgId: string, key: string): Promise<number> {
  let total = 0;
  for (const counter of counters) total += await counter(db, orgId, key);
  return total;
}
