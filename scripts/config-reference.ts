// Prints the README's configuration reference, generated from CONFIG_KEYS (src/config/schema.ts).
// `npm run docs:config` prints it; `npm run docs:config -- --write` replaces it in README.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONFIG_KEYS, envNameOf, type KeySpec } from '../src/config/schema.js';
import { PLAN_IDS, PLAN_NUMERIC_COLUMNS } from '../src/plans/catalog.js';

export const START_MARKER = '<!-- config:start -->';
export const END_MARKER = '<!-- config:end -->';

const PLAN_KEY_RE = /^plans\.[^.]+\.[^.]+$/;

const code = (s: string): string => '`' + s + '`';
const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

function typeOf(spec: KeySpec): string {
  const base = spec.type === 'string[]' ? 'list of strings' : spec.type;
  if (spec.oneOf) return `${base}: ${spec.oneOf.join(', ')}`;
  if (spec.min !== undefined) return `${base} ≥ ${spec.min}`;
  return base;
}

function defaultOf(spec: KeySpec): string {
  if (spec.default === undefined) return spec.secret ? 'unset (secret)' : 'unset';
  if (Array.isArray(spec.default)) return code(spec.default.join(','));
  return code(String(spec.default));
}

function row(cells: string[]): string {
  return `| ${cells.map(cell).join(' | ')} |`;
}

/** The Markdown table: one row per key, the `plans.<plan>.<column>` keys as one pattern row. */
export function configReference(): string {
  const lines = [row(['Key', 'Env var', 'Type', 'Default', 'Description']), '|---|---|---|---|---|'];
  const planKeys = Object.entries(CONFIG_KEYS).filter(([key]) => PLAN_KEY_RE.test(key));
  let planRowWritten = false;
  for (const [key, spec] of Object.entries(CONFIG_KEYS)) {
    if (PLAN_KEY_RE.test(key)) {
      if (!planRowWritten) lines.push(planRow(planKeys.map(([, s]) => s)));
      planRowWritten = true;
      continue;
    }
    const env = [envNameOf(key), ...(spec.envAliases ?? [])].map(code).join(', ');
    lines.push(row([code(key), env, typeOf(spec), defaultOf(spec), spec.description]));
  }
  return lines.join('\n');
}

function planRow(specs: KeySpec[]): string {
  const [first] = specs;
  if (!first || specs.some((s) => typeOf(s) !== typeOf(first) || s.default !== undefined)) {
    throw new Error('plans.<plan>.<column> keys no longer share one type; list them one by one');
  }
  return row([
    code('plans.<plan>.<column>'),
    code('KEEPWATCH_PLANS__<PLAN>__<COLUMN>'),
    typeOf(first),
    "the spec's value",
    `Changes a column of a seeded plan, applied at every boot (${specs.length} keys). ` +
      `${code('<plan>')}: ${PLAN_IDS.join(', ')}. ${code('<column>')}: ${PLAN_NUMERIC_COLUMNS.join(', ')}.`,
  ]);
}

/** `text` with the part between the markers replaced by the generated table. */
export function withReference(text: string): string {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error(`README.md lacks ${START_MARKER} ... ${END_MARKER}`);
  return `${text.slice(0, start + START_MARKER.length)}\n${configReference()}\n${text.slice(end)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--write')) {
    const readme = join(import.meta.dirname, '..', 'README.md');
    writeFileSync(readme, withReference(readFileSync(readme, 'utf8')));
  } else {
    process.stdout.write(configReference() + '\n');
  }
}
