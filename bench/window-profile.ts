// A CPU profile of a measured window, through the inspector. `node:inspector` is imported only when a
// profile is asked for: merely loading it slows a server down (bench:api at c90cdff: 51 µs of CPU a
// request without it, 74 with it), so a process that statically imports it measures itself slower.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WindowProfile {
  /** Stops profiling and writes `<name>.cpuprofile` into `dir`; returns its path. */
  stop(dir: string, name: string): Promise<string>;
}

export async function startWindowProfile(): Promise<WindowProfile> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(dir, name) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${name}.cpuprofile`);
      writeFileSync(path, JSON.stringify(profile));
      return path;
    },
  };
}
