// Summarises a `.cpuprofile` (V8's format, as `--cpu-prof` or the inspector's Profiler.stop writes
// it): self time by function and by area (a src/ directory, an npm package, a node: module, GC),
// busy time only: `(idle)` is left out of the percentages.
import { readFileSync } from 'node:fs';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/** Where a frame's code lives, coarsely. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(src|bench)\/(.+?)\.[cm]?[jt]s$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').replace(/\/.*$/, '');
  return url;
}

export function summariseProfile(path: string, top = 25): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i: it belongs to the sample before it.
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + delta);
  }
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') { idle += us; continue; }
    busy += us;
    const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/').replace(/^file:\/\//, '')}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}  ${where}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    areas.set(areaOf(frame), (areas.get(areaOf(frame)) ?? 0) + us);
  }
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const lines = [`busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms of ${((busy + idle) / 1000).toFixed(0)} ms sampled on the main thread`, '', 'self time by area:'];
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`  ${ms(us)} ${pct(us)}  ${area}`);
  lines.push('', `self time by function (top ${top}):`);
  for (const [fn, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${ms(us)} ${pct(us)}  ${fn}`);
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('checks-profile.ts') && process.argv[2]) {
  // `npx tsx bench/checks-profile.ts FILE.cpuprofile [TOP]`
  process.stdout.write(`${summariseProfile(process.argv[2], Number(process.argv[3] ?? 25))}\n`);
}
