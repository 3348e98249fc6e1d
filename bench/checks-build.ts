// Compiles src/ and bench/ to plain JavaScript in a temporary directory, so the processes of
// `npm run bench:checks` and `bench:pings` run as `keepwatch serve` runs from dist/: under plain
// `node`, without tsx's loader thread and its caches (some 35 MB of RSS before any module, more once
// src/ is loaded) or its transform's `__name` call on every closure made, which would otherwise count
// as the server's.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface CompiledTree {
  /** Where bench/*.js are. */
  benchDir: string;
  remove(): void;
}

export function compileTree(): CompiledTree {
  const dir = mkdtempSync(join(tmpdir(), 'keepwatch-bench-js-'));
  const out = join(dir, 'out');
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    extends: join(ROOT, 'tsconfig.json'),
    compilerOptions: { noEmit: false, outDir: out, rootDir: ROOT, sourceMap: false },
    include: [join(ROOT, 'src'), join(ROOT, 'bench')],
  }));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
  // A type error elsewhere in a tree being edited still emits; only a missing output is fatal.
  if (!existsSync(join(out, 'bench', 'checks-node.js'))) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`compiling src/ and bench/ failed (run with --tsx to skip this step):\n${run.stdout}${run.stderr}`);
  }
  // What src/ reads beside its modules at run time: the migrations, package.json (the version),
  // node_modules, and the optional native addon.
  cpSync(join(ROOT, 'src', 'db', 'migrations'), join(out, 'src', 'db', 'migrations'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(out, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  if (existsSync(join(ROOT, 'build'))) symlinkSync(join(ROOT, 'build'), join(out, 'build'), 'dir');
  return { benchDir: join(out, 'bench'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
