// The Node flags `keepwatch serve` runs with, read from bin/keepwatch.js's `#!/usr/bin/env -S node ...`
// line (its one home), so a bench measures a server as production starts it.
import { readFileSync } from 'node:fs';

const shebang = readFileSync(new URL('../bin/keepwatch.js', import.meta.url), 'utf8').split('\n', 1)[0]!;

export const SERVE_NODE_FLAGS: readonly string[] = shebang.split(/\s+/).slice(shebang.split(/\s+/).indexOf('node') + 1);
