// A POST ping's body as its run's output (monitoring-api.md, "Heartbeat ping endpoint" rule 2):
// the first 4 KiB are kept, reading stops past 256 KiB or after 10 s, and a body not read to the
// end keeps no output. The ping itself never waits for any of this.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export interface OutputLimits { keepBytes: number; readMaxBytes: number; readMs: number }

export const OUTPUT_LIMITS: OutputLimits = { keepBytes: 4 * 1024, readMaxBytes: 256 * 1024, readMs: 10_000 };

/** `complete` is false when reading stopped early (too long, too slow, or the client went away). */
export interface ReadOutput { output: string | null; complete: boolean }

/**
 * The kept bytes as text: a multi-byte character cut by the 4 KiB mark is dropped rather than
 * mangled, and NULs (which a text column refuses) are removed.
 */
export function outputText(kept: Buffer): string | null {
  const text = new StringDecoder('utf8').write(kept).replaceAll('\u0000', '');
  return text.length ? text : null;
}

export function readOutput(stream: Readable, limits: OutputLimits = OUTPUT_LIMITS): Promise<ReadOutput> {
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let total = 0;
    const finish = (complete: boolean): void => {
      clearTimeout(timer);
      stream.off('data', onData).off('end', onEnd).off('error', onStop).off('close', onStop);
      if (!complete) stream.pause();
      resolve({ output: complete ? outputText(Buffer.concat(kept)) : null, complete });
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > limits.readMaxBytes) return finish(false);
      if (keptBytes < limits.keepBytes) {
        const part = chunk.subarray(0, limits.keepBytes - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
    };
    const onEnd = (): void => finish(true);
    const onStop = (): void => finish(false);
    const timer = setTimeout(onStop, limits.readMs);
    if (stream.readableEnded) return finish(true);
    stream.on('data', onData).on('end', onEnd).on('error', onStop).on('close', onStop);
  });
}
