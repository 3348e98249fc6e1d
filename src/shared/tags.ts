// Tag rules (monitoring-api.md, "Target (monitor)" tags; a channel's `auto_bind_tags` follow them
// too): trimmed, no blank, control or invisible characters, de-duplicated, then counted.
import { AppError } from './errors.js';

export const TAGS_MAX = 50;
export const TAG_MAX_LENGTH = 50;

// Control, format (zero-width, bidi), private-use, unassigned and surrogate code points, line and
// paragraph separators, spaces other than U+0020, and the fillers that render as nothing.
const INVISIBLE = /[\p{C}\p{Zl}\p{Zp}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u115F\u1160\u3164\uFFA0\u034F\u17B4\u17B5\u180E\u2800]/u;

const tagError = (field: string, message: string): AppError => new AppError(400, 'VALIDATION_FAILED', `${field}: ${message}`, { field });

/** The spelling two tags share when matching ignores case. */
export const tagKey = (tag: string): string => tag.toLowerCase();

/**
 * Trimmed, de-duplicated (first spelling kept, in order), then counted. `field` names the array
 * in errors; with `ignoreCase`, two spellings of one tag are kept once (auto-bind matching ignores case).
 */
export function normalizeTags(tags: readonly string[], field = 'tags', { ignoreCase = false } = {}): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  tags.forEach((raw, i) => {
    // NFC: `é` typed as one code point or as `e` and a combining accent is one tag.
    const tag = raw.trim().normalize('NFC');
    const at = `${field}[${i}]`;
    if (tag === '') throw tagError(at, 'must not be blank');
    if (INVISIBLE.test(tag)) throw tagError(at, 'must not contain control or invisible characters');
    if ([...tag].length > TAG_MAX_LENGTH) throw tagError(at, `must be at most ${TAG_MAX_LENGTH} characters`);
    const key = ignoreCase ? tagKey(tag) : tag;
    if (!seen.has(key)) { seen.add(key); out.push(tag); }
  });
  if (out.length > TAGS_MAX) throw tagError(field, `at most ${TAGS_MAX} distinct tags`);
  return out;
}
