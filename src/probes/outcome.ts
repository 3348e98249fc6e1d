// What probes share about failing well: one timeout budget for the whole check (resolution
// included, which honours no signal), and a short human reason for whatever went wrong.
import type { ProbeResult } from './types.js';

/** `ip_version` as the guard and `net` take it. */
export const FAMILY = { any: 0, ipv4: 4, ipv6: 6 } as const;

export class CheckTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timeout after ${timeoutMs} ms`);
    this.name = 'CheckTimeoutError';
  }
}

/**
 * Runs `run` under a signal that aborts after `timeoutMs` or with `outer`; settles at the deadline
 * even when `run` is stuck in something that ignores the signal. Any throw becomes `onError`'s result.
 */
export async function withDeadline(timeoutMs: number, outer: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<ProbeResult>, onError: (err: unknown) => ProbeResult): Promise<ProbeResult> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onOuterAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const fail = (reason: unknown): void => { controller.abort(reason); reject(reason); };
    timer = setTimeout(() => fail(new CheckTimeoutError(timeoutMs)), timeoutMs);
    if (outer?.aborted) fail(new Error('check aborted'));
    onOuterAbort = () => fail(new Error('check aborted'));
    outer?.addEventListener('abort', onOuterAbort, { once: true });
  });
  try {
    return await Promise.race([run(controller.signal), deadline]);
  } catch (err) {
    // An abort surfaces as AbortError from whatever was in flight: report the reason behind it.
    return onError(controller.signal.aborted ? controller.signal.reason : err);
  } finally {
    clearTimeout(timer);
    // `outer` is the scheduler's one signal for every check: a listener left on it would pile up
    // (and each add walks the whole list), so every check takes its own off again.
    if (onOuterAbort) outer?.removeEventListener('abort', onOuterAbort);
    deadline.catch(() => {});
  }
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'name resolution failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed while sending',
  HPE_INVALID_CONSTANT: 'invalid HTTP response',
};

/** A short reason for a failed check; TLS verification errors keep their code (CERT_HAS_EXPIRED...). */
export function describeError(err: unknown): string {
  if (err instanceof CheckTimeoutError) return err.message;
  const e = err as NodeJS.ErrnoException & { hostname?: string };
  if (e?.code === 'EBLOCKEDADDRESS') return e.message;
  if (e?.code && REASONS[e.code]) return e.hostname && e.code === 'ENOTFOUND' ? `${REASONS[e.code]}: ${e.hostname}` : REASONS[e.code]!;
  if (e?.code && /CERT|SELF_SIGNED|TLS|SSL|ERR_TLS/.test(e.code)) return `TLS: ${e.message} (${e.code})`;
  if (e?.code?.startsWith('HPE_')) return `invalid HTTP response: ${e.message}`;
  return e?.message ? String(e.message).slice(0, 500) : String(err).slice(0, 500);
}
