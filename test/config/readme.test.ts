import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configReference, END_MARKER, START_MARKER } from '../../scripts/config-reference.js';
import { CONFIG_KEYS, envNameOf } from '../../src/config/schema.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README configuration reference', () => {
  it('holds exactly the table generated from CONFIG_KEYS (npm run docs:config -- --write)', () => {
    const start = readme.indexOf(START_MARKER);
    const end = readme.indexOf(END_MARKER);
    assert.ok(start >= 0 && end > start, 'README.md has the config markers');
    assert.equal(readme.slice(start + START_MARKER.length, end).trim(), configReference());
  });

  it('lists every key but the plan columns by name and env var, and the plan columns as one pattern', () => {
    const table = configReference();
    const planKeys = Object.keys(CONFIG_KEYS).filter((k) => k.startsWith('plans.'));
    assert.equal(planKeys.length, 104);
    for (const key of Object.keys(CONFIG_KEYS).filter((k) => !k.startsWith('plans.'))) {
      assert.ok(table.includes(`| \`${key}\` | \`${envNameOf(key)}\``), key);
    }
    assert.ok(!planKeys.some((k) => table.includes(`\`${k}\``)));
    assert.equal(table.split('\n').filter((l) => l.startsWith('| `plans.<plan>.<column>`')).length, 1);
  });
});
